/**
 * The macOS form of the agent sandbox: Apple's Seatbelt through `/usr/bin/sandbox-exec`, with the same
 * declarations as bubblewrap's (sandbox.ts): the card's workspace, the git dirs a commit there writes,
 * the temporary folders and the kind's home folders are writable; everything else is read-only; Baton's
 * data dirs cannot be read or written except the hub socket and the card's MCP config and prompt; the
 * network stays open. The profile is `allow default`, then `deny file-write*`, then the writable paths,
 * then the data dirs denied, then their three files allowed: in Seatbelt's language a later rule wins
 * over an earlier one for what both match (the pattern Bazel's macOS sandbox uses). Every path is a
 * `-D` parameter, never spliced into the profile text, so no path can change the profile.
 * What Seatbelt does not give (unlike bubblewrap): a private /tmp (the agent writes the shared one) and a
 * pid namespace (a process the agent detaches with setsid outlives the card's process group).
 * Must not: spawn the agent (spawnAgent.ts does), or widen what is writable beyond sandbox.ts's
 * declarations.
 */
import { existsSync, realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type { Launch } from './agents';
import { type SandboxPlan, gitWrites, homeWrites } from './sandbox';

/** Device files every program writes (a shell's redirections, terminals, dtrace's helper). */
const deviceWrites = ['/dev/null', '/dev/zero', '/dev/dtracehelper'];

/** The agent's launch, wrapped in `sandbox-exec` with the plan's profile. */
export function seatbelted(program: string, launch: Launch, plan: SandboxPlan): Launch {
	const { profile, params } = seatbeltProfile(plan);
	const defines = Object.entries(params).flatMap(([key, value]) => ['-D', `${key}=${value}`]);
	return {
		command: program,
		args: ['-p', profile, ...defines, launch.command, ...launch.args],
		cwd: launch.cwd,
		env: launch.env,
	};
}

/**
 * The profile text and its parameters for `plan`. Paths are resolved through symlinks (on macOS /tmp is
 * /private/tmp and Seatbelt matches the real path); one that does not exist yet is kept as given.
 */
export function seatbeltProfile(plan: SandboxPlan): { profile: string; params: Record<string, string> } {
	const params: Record<string, string> = {};
	const param = (prefix: string, path: string): string => {
		const key = `${prefix}${Object.keys(params).filter(k => k.startsWith(prefix)).length}`;
		params[key] = real(path);
		return `(param "${key}")`;
	};
	const home = plan.home ?? homedir();
	const writable = [plan.workspace, ...gitWrites(plan.workspace), '/tmp', tmpdir(), ...homeWrites(plan.kind, home)];
	const folders = writable.map(path => `(subpath ${param('W', path)})`);
	const devices = deviceWrites.map(path => `(literal "${path}")`);
	const hidden = [resolve(plan.dataDir), join(home, '.config', 'baton')]
		.filter((dir, i, all) => all.indexOf(dir) === i && existsSync(dir))
		.map(dir => `(subpath ${param('H', dir)})`);
	const lines = [
		'(version 1)',
		'(allow default)',
		'(deny file-write*)',
		`(allow file-write* ${[...folders, ...devices, '(regex #"^/dev/tty")', '(regex #"^/dev/fd/")'].join(' ')})`,
	];
	if (hidden.length > 0) {
		lines.push(`(deny file-read* file-write* ${hidden.join(' ')})`);
		// The folders themselves can still be looked at (as bubblewrap shows them empty), not listed.
		lines.push(`(allow file-read-metadata ${hidden.map(h => h.replace('(subpath', '(literal')).join(' ')})`);
		lines.push(`(allow file-read* file-write* (literal ${param('S', plan.socket)}))`);
		const readable = plan.readable.map(file => `(literal ${param('R', file)})`);
		if (readable.length > 0) {
			lines.push(`(allow file-read* ${readable.join(' ')})`);
		}
	}
	return { profile: `${lines.join('\n')}\n`, params };
}

function real(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return resolve(path);
	}
}
