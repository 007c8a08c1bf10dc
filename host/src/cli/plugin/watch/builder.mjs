// The resident TypeScript builder of `devtools-mcp plugin test --watch`: what the project's
// `npm run compile` does (tsc, then componentize-js), in one Node.js process kept between
// edits. A new process spends seconds warming V8 up on componentize-js's splicer and on the
// TypeScript compiler; this one pays that once. It runs in the project folder, so `typescript`
// and componentize-js resolve from the project's own node_modules (the versions it pinned).
//
// Protocol: one line on stdin per build, the path of the component to write. After each, one line on stdout starting with the
// marker below and a JSON object, `{"ok":true}` or `{"ok":false,"error":"..."}`; every
// other line is the tools' own output, shown to the author.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';

const MARKER = '\u0000devtools-mcp-builder ';
const project = process.cwd();
const [world] = process.argv.slice(1);

const ts = (await import('typescript')).default;
const { componentize } = await import('@bytecodealliance/componentize-js');

// Parsed source files kept between builds while their file is unchanged: the standard
// library's declarations are most of every compile's parsing.
const parsed = new Map();

function typescript() {
  const configFile = join(project, 'tsconfig.json');
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  const config = ts.getParsedCommandLineOfConfigFile(configFile, {}, host);
  if (!config) throw new Error(`${configFile} cannot be read.`);
  const compilerHost = ts.createCompilerHost(config.options);
  const getSourceFile = compilerHost.getSourceFile;
  compilerHost.getSourceFile = (fileName, languageVersion, ...rest) => {
    let modified;
    try {
      modified = statSync(fileName).mtimeMs;
    } catch {
      return getSourceFile(fileName, languageVersion, ...rest);
    }
    const known = parsed.get(fileName);
    if (known && known.modified === modified) return known.file;
    const file = getSourceFile(fileName, languageVersion, ...rest);
    if (file) parsed.set(fileName, { modified, file });
    return file;
  };
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    host: compilerHost,
  });
  const emitted = program.emit();
  const diagnostics = [
    ...config.errors,
    ...ts.getPreEmitDiagnostics(program),
    ...emitted.diagnostics,
  ];
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (file) => file,
        getCurrentDirectory: () => project,
        getNewLine: () => '\n',
      }).trimEnd()
    );
  }
}

async function component(out) {
  const source = await readFile(join(project, 'build', 'tool.js'), 'utf8');
  const { component } = await componentize(source, {
    sourceName: 'tool.js',
    witPath: resolve(project, 'wit'),
    worldName: world,
    disableFeatures: ['random', 'clocks', 'http'],
  });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, component);
}

function answer(outcome) {
  process.stdout.write(MARKER + JSON.stringify(outcome) + '\n');
}

answer({ ok: true, ready: true });
for await (const out of createInterface({ input: process.stdin })) {
  try {
    typescript();
    await component(resolve(project, out));
    answer({ ok: true });
  } catch (error) {
    answer({ ok: false, error: String(error?.message ?? error) });
  }
}
