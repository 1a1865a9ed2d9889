import time
time.sleep(3600)  # hangs at import
