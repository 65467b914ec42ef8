// Type-checks every folder with its own tsconfig (its own lib/types), so the compiler refuses
// `document` in core and `fs` in the webview. tsc only checks; esbuild emits.
import { spawnSync } from 'node:child_process';

const projects = ['core', 'mcp-server', 'extension', 'webview', 'test', 'scripts'];
let failed = false;
for (const project of projects) {
	const r = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project, '--noEmit'], {
		stdio: 'inherit',
	});
	if (r.status !== 0) {
		console.error(`typecheck: ${project} failed`);
		failed = true;
	}
}
process.exit(failed ? 1 : 0);
