/**
 * The suite for the oldest VS Code the extension installs in (engines.vscode: code-server 4.100.3 =
 * VS Code 1.100), loaded by the extension host (`extensionTestsPath`): a compatibility proof, so the
 * groups that drive the workbench and the APIs whose behaviour changes between versions — activation,
 * the tree, the commands and quick picks, the status bar, `vscode.changes` for a workspace's diff, file
 * decorations, the board's webview and the screenshot. The groups that test the extension's own logic
 * through those same APIs (review desk, hub connection, epics, dispatch) run in the newest VS Code only,
 * with everything else (latest.ts). Test files register their cases on import.
 */
import './activation.test';
import './pure.test';
import './backlogTree.test';
import './commands.test';
import './statusBar.test';
import './workspaceReview.test';
import './scopes.test';
import './ui.test';

export { run } from './harness';
