// Builds the package into dist/: ES modules in dist/esm and CommonJS in dist/cjs (its own
// package.json says so), each with its type declarations, from src/ with the pinned
// TypeScript. `npm pack` runs it (prepack).
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync("dist", { recursive: true, force: true });
for (const project of ["tsconfig.esm.json", "tsconfig.cjs.json"]) {
  execFileSync(process.execPath, [tsc, "--project", project], { stdio: "inherit" });
}
writeFileSync("dist/cjs/package.json", '{ "type": "commonjs" }\n');
