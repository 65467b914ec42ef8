/**
 * `npm run test:extension`: the extension's suite inside a real VS Code (code-server), through
 * @vscode/test-electron's runTests (see vscodeRun.ts). Needs `npm run build` first.
 * BATON_UPDATE_SCREENSHOTS=1 rewrites docs/vscode.png.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runInVsCode } from './vscodeRun';

// docs/vscode.png is a tracked file: only rewrite it when asked, as the board tests do.
const updateDocs = process.env.BATON_UPDATE_SCREENSHOTS === '1';
const screenshot = updateDocs
	? join(repoRoot, 'docs', 'vscode.png')
	: join(tmpdir(), `baton-vscode-${process.pid}.png`);

runInVsCode({
	suite: join(repoRoot, 'test/extension/suite/index.ts'),
	settings: { 'baton.agent.name': 'Test Human' },
	env: { BATON_TEST_SCREENSHOT: screenshot },
})
	.finally(() => {
		if (!updateDocs) {
			rmSync(screenshot, { force: true });
		}
	})
	.then(
		code => process.exit(code),
		(e: unknown) => {
			console.error(e instanceof Error ? e.message : e);
			process.exit(1);
		},
	);
