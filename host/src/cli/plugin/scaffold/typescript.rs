//! A TypeScript tool: `src/tool.ts` against typed bindings that `jco guest-types` makes from
//! the tool's world, compiled with `tsc` and made a component by componentize-js (through
//! jco). Of WASI it keeps stdio only (`--disable random/clocks/http`): StarlingMonkey writes
//! an uncaught exception's message and stack to stderr, which the host puts in the crash
//! report (the host's WASI grants nothing). The tools come from npm at pinned versions.

use super::{CONTRACT_VERSION, Template, action, structured, world_name, write_files};
use std::path::Path;

/// jco (with componentize-js 0.17 inside) and TypeScript, the versions the tests build with.
pub const JCO_VERSION: &str = "1.10.2";
pub const TYPESCRIPT_VERSION: &str = "5.9.3";

/// The `compile` script of a new project: `plugin test --watch` does the same in a resident
/// process while a project's script is still this one.
pub fn compile_script(name: &str) -> String {
    let world = world_name(name);
    format!(
        "tsc -p . && jco componentize build/tool.js --wit wit --world-name {world} --disable random --disable clocks --disable http -o dist/{name}.wasm"
    )
}

pub fn create(name: &str, root: &Path, template: Template) -> Result<(), String> {
    let world = world_name(name);
    let compile = compile_script(name);
    let package = format!(
        r#"{{
  "name": "{name}",
  "private": true,
  "type": "module",
  "description": "A devtools-mcp tool written in TypeScript.",
  "scripts": {{
    "types": "jco guest-types wit --world-name {world} -o types",
    "compile": "{compile}",
    "build": "npm run types && npm run compile"
  }},
  "devDependencies": {{
    "@bytecodealliance/jco": "{JCO_VERSION}",
    "typescript": "{TYPESCRIPT_VERSION}"
  }}
}}
"#
    );
    let tsconfig = r#"{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ES2022",
    "moduleResolution": "bundler",
    "strict": true,
    "skipLibCheck": true,
    "rootDir": "src",
    "outDir": "build",
    "sourceMap": true
  },
  "include": ["src", "types"]
}
"#;
    let source = match template {
        Template::PageReader => page_reader(name),
        Template::Action => action::typescript(name),
        Template::Structured => structured::typescript(name),
    };
    write_files(
        root,
        &[
            ("package.json", package),
            ("tsconfig.json", tsconfig.to_string()),
            ("src/tool.ts", source),
            (
                ".gitignore",
                "/node_modules\n/build\n/types\n/dist\n".to_string(),
            ),
        ],
    )
}

fn page_reader(name: &str) -> String {
    format!(
        r#"// `{name}`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`.
//
// It imports the host's interfaces as modules; each is a capability (see wit/world.wit). The
// types come from `npm run types` (jco guest-types), so the compiler checks every call.
import {{ appendLine }} from 'devtools:tool/response@{CONTRACT_VERSION}';
import {{ url }} from 'devtools:tool/pages@{CONTRACT_VERSION}';
import type {{ ToolDefinition }} from 'devtools:tool/tool@{CONTRACT_VERSION}';
import type {{ Page }} from 'devtools:tool/types@{CONTRACT_VERSION}';

/// The tool's parameters, as its JSON Schema below describes them.
interface Params {{
  prefix?: string;
}}

const inputSchema = {{
  type: 'object',
  properties: {{
    prefix: {{
      type: 'string',
      description: 'Text to put before the page\'s URL in the answer (default: "The page is at").',
    }},
  }},
}};

export const tool = {{
  definition(_serverFlags: string): ToolDefinition {{
    return {{
      name: '{name}',
      description: 'Tells the URL of the selected page.',
      annotations: {{ title: undefined, category: 'debugging', readOnlyHint: true, conditions: [] }},
      inputSchema: JSON.stringify(inputSchema),
      pageScoped: true,
      blockedByDialog: false,
      fileParams: [],
    }};
  }},

  handle(params: string, page: Page | undefined): void {{
    if (page === undefined) {{
      throw 'This page-scoped tool was called without a page.';
    }}
    const {{ prefix }}: Params = JSON.parse(params);
    appendLine(`${{prefix ?? 'The page is at'}} ${{url(page)}}`);
  }},
}};
"#
    )
}
