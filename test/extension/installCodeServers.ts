/**
 * Installs every code-server build the VS Code suites run in (vscodeRun.ts `codeServers`), and nothing
 * else. .ci/run starts it in the background beside the first suites, so the ~5 minutes of npm and
 * native builds are off the critical path; a suite that needs a build still installing waits for it.
 */
import { codeServerBuilds, ensureCodeServer } from './vscodeRun';

for (const build of codeServerBuilds) {
	ensureCodeServer(build);
}
