"""Views of merged records for people: the vendor evaluation, per-device and per-version figures, the
tuning-portability penalty, the comparison between Triton versions held in one merge, trends from the
history file, and the SVG they are drawn with. Each view is data first (plain dataclasses built from
records), rendered to markdown or HTML by its caller; ``harness/report_html.py`` assembles the page.
"""
