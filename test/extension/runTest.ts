/**
 * `npm run test:extension`: the extension's suite inside a real VS Code (code-server), through
 * @vscode/test-electron's runTests (see vscodeRun.ts). Needs `npm run build` first.
 * BATON_UPDATE_SCREENSHOTS=1 rewrites docs/vscode.png. BATON_TEST_GREP=text runs only the describe
 * groups whose name contains it (harness.ts), e.g. `BATON_TEST_GREP='workbench UI'` for the screenshot.
 * Without flags it runs suite/index.ts, the compatibility subset, in the oldest supported VS Code
 * (engines.vscode); `--latest` (`npm run test:extension:latest`) runs suite/latest.ts (every group, and
 * what needs a newer VS Code than engines.vscode) in the newest code-server.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runInVsCode } from './vscodeRun';

const latest = process.argv.includes('--latest');
// docs/vscode.png is a tracked file: only rewrite it when asked, as the board tests do, and from the
// pinned VS Code (the latest suite runs the same UI case).
const updateDocs = process.env.BATON_UPDATE_SCREENSHOTS === '1' && !latest;
const screenshot = updateDocs
	? join(repoRoot, 'docs', 'vscode.png')
	: join(tmpdir(), `baton-vscode-${process.pid}.png`);

runInVsCode({
	suite: join(repoRoot, 'test/extension/suite', latest ? 'latest.ts' : 'index.ts'),
	build: latest ? 'latest' : 'pinned',
	settings: { 'baton.agent.name': 'Test Human' },
	env: {
		BATON_TEST_SCREENSHOT: screenshot,
		...(process.env.BATON_TEST_GREP === undefined ? {} : { BATON_TEST_GREP: process.env.BATON_TEST_GREP }),
	},
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
