// Runs a Python script under the real MicroPython (its WebAssembly port), with the
// firmware's files copied into MicroPython's file system at /fw.
// usage: node run.mjs MICROPYTHON_MJS FIRMWARE_DIR SCRIPT
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [mjs, firmware, script] = process.argv.slice(2);
const { loadMicroPython } = await import(pathToFileURL(mjs).href);
const mp = await loadMicroPython({
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
});
mp.FS.mkdir("/fw");
mp.FS.mkdir("/fw/bunco_dice");
mp.FS.mkdir("/state");
for (const name of ["main.py", "bunco_dice/__init__.py", "bunco_dice/logic.py"]) {
  mp.FS.writeFile(`/fw/${name}`, readFileSync(`${firmware}/${name}`));
}
mp.runPython(readFileSync(script, "utf8"));
