/**
 * The CLI's Output captured in memory, for tests that run a command in process: what it printed to
 * stdout and stderr, each line newline-terminated. Prints nothing itself.
 */
import type { Output } from '../../mcp-server/cli/output';

export function captureOutput(): Output & { stdout: string; stderr: string } {
	const o = {
		stdout: '',
		stderr: '',
		out(text: string) {
			o.stdout += `${text}\n`;
		},
		err(text: string) {
			o.stderr += `${text}\n`;
		},
	};
	return o;
}
