/**
 * The suite for the newest VS Code (`npm run test:extension:latest`, code-server 4.117 = VS Code 1.117
 * on Node 22), where most users are: every group, and what only exists from VS Code 1.101 on, the MCP
 * server definition provider, driven by VS Code itself. The oldest supported VS Code runs a
 * compatibility subset (index.ts). Test files register their cases on import, in this order.
 */
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
import './mcpProvider.test';

export { run } from './harness';
