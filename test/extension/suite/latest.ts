/**
 * The suite for the newest VS Code (`npm run test:extension:latest`, code-server 4.117 = VS Code 1.117
 * on Node 22): the whole pinned suite, since most users run a current VS Code, and what only exists
 * from VS Code 1.101 on, the MCP server definition provider, driven by VS Code itself.
 */
import './index';
import './mcpProvider.test';

export { run } from './index';
