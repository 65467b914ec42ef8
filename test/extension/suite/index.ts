/**
 * The suite's entry point, loaded by the extension host (`extensionTestsPath`). VS Code calls run()
 * and treats a rejection as failure. Test files register their cases on import.
 */
import { runAll } from './harness';
import './activation.test';
import './pure.test';
import './backlogTree.test';
import './epics.test';
import './commands.test';
import './statusBar.test';
import './review.test';
import './workspaceReview.test';
import './hubConnection.test';
import './scopes.test';
import './dispatch.test';
import './ui.test';

export async function run(): Promise<void> {
	const summary = await runAll();
	if (summary.failed > 0) {
		throw new Error(`${summary.failed} extension test(s) failed`);
	}
}
