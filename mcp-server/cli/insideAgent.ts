/**
 * Whether this process runs inside a coding agent: the variables `baton run` gives the agents it
 * starts, the environment markers agent CLIs set for the commands they run, `baton mcp`'s own marker,
 * or an agent CLI among the nearest ancestor processes (/proc, Linux only). The CLI refuses to approve
 * or reject from there and tells the hub in its hello, whose human verbs (hub/humanVerbs.ts) are then
 * refused, so a person's review, settings or pauses are not an agent running `baton` in its own shell.
 * It guards against that, not against a process that hides itself (docs/guide.md, "Who may do what").
 * Reads the environment and /proc only; decides nothing about cards.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * The variable `baton mcp` sets in its own environment at start: whatever it runs inherits it. It
 * starts nothing but the hub, whose spawn leaves it out (core/client/connectHub.ts).
 */
export const mcpMarker = 'BATON_INSIDE_MCP';

/**
 * Variables agent CLIs set for the commands they run (their docs; the agents.md proposal for a common
 * `AGENT` lists the others): Claude Code, Codex's sandbox, Gemini CLI, Cursor's agent, VS Code's agent
 * terminal, Augment, Cline, OpenCode, TRAE, and the proposed common ones. CODEX_HOME is not one: a
 * person sets it for their own Codex too.
 */
export const agentEnvMarkers: readonly string[] = [
	mcpMarker,
	// What `baton run` gives every agent it starts (its card and seat credential, mcp-server/dispatch/).
	'BATON_CARD_ID',
	'BATON_SEAT_TOKEN',
	'CLAUDECODE',
	'CODEX_SANDBOX',
	'CODEX_SANDBOX_NETWORK_DISABLED',
	'GEMINI_CLI',
	'CURSOR_AGENT',
	'VSCODE_AGENT',
	'AUGMENT_AGENT',
	'CLINE_ACTIVE',
	'OPENCODE_CLIENT',
	'TRAE_AI_SHELL_ID',
	'AI_AGENT',
	'AGENT',
];

/** Program names of agent CLIs, as a process's comm or the basename of its argv[0] / argv[1]. */
export const agentProgramNames: ReadonlySet<string> = new Set([
	'claude',
	'codex',
	'gemini',
	'cursor-agent',
	'aider',
	'opencode',
	'goose',
	'amp',
	'cline',
	'qwen',
	'crush',
	'auggie',
]);

/**
 * Ancestors looked at: the parent, its parent and one more. An agent's shell tool runs the command
 * right under it (agent → shell → baton); `npx baton` adds two (agent → shell → npm → sh → baton),
 * which the environment markers cover. Further up would reach the agent a person's test run or
 * terminal happens to have been started from.
 */
const ancestorDepth = 3;

export interface InsideAgentProbe {
	env: NodeJS.ProcessEnv;
	/** The first ancestor to look at (default: this process's parent). */
	parentPid?: number;
	/** Where /proc is (tests). */
	procRoot?: string;
}

/**
 * What `baton run` gives every agent it starts (the card it claimed for it, the session that holds it):
 * a command whose environment has one of them runs inside a dispatched agent, whatever else the
 * supervisor left out. A person sets neither; an agent that unsets them is the sandbox's and the seat
 * credential's to hold (docs/guide.md, "Who may do what").
 */
export const dispatchedMarkers: readonly string[] = ['BATON_SESSION', 'BATON_CARD_ID'];

/** What gave away that this process runs inside a coding agent, or undefined when nothing did. */
export function insideAgent(probe: InsideAgentProbe): string | undefined {
	for (const name of dispatchedMarkers) {
		const value = probe.env[name];
		if (value !== undefined && value !== '') {
			return `${name} is set: baton run started it`;
		}
	}
	for (const name of agentEnvMarkers) {
		const value = probe.env[name];
		if (value !== undefined && value !== '' && value !== '0' && value !== 'false') {
			return `${name} is set`;
		}
	}
	const procRoot = probe.procRoot ?? '/proc';
	let pid = probe.parentPid ?? process.ppid;
	for (let depth = 0; depth < ancestorDepth && pid > 1; depth++) {
		const program = agentProgram(procRoot, pid);
		if (program !== undefined) {
			return `it runs under ${program} (pid ${pid})`;
		}
		const parent = parentOf(procRoot, pid);
		if (parent === undefined) {
			break;
		}
		pid = parent;
	}
	return undefined;
}

/** The agent CLI process `pid` is, if it is one: its comm, or its argv[0] / argv[1] (node scripts). */
function agentProgram(procRoot: string, pid: number): string | undefined {
	const names: string[] = [];
	const comm = readProc(procRoot, pid, 'comm');
	if (comm !== undefined) {
		names.push(comm.trim());
	}
	const cmdline = readProc(procRoot, pid, 'cmdline');
	if (cmdline !== undefined) {
		names.push(...cmdline.split('\0').slice(0, 2).map(programName));
	}
	return names.find(n => agentProgramNames.has(n));
}

/** "/usr/lib/node_modules/@google/gemini-cli/dist/gemini.js" → "gemini". */
function programName(arg: string): string {
	return basename(arg).replace(/\.(c|m)?js$/, '');
}

function parentOf(procRoot: string, pid: number): number | undefined {
	const stat = readProc(procRoot, pid, 'stat');
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
	const ppid = stat === undefined ? NaN : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
	return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}

function readProc(procRoot: string, pid: number, file: string): string | undefined {
	try {
		return readFileSync(`${procRoot}/${pid}/${file}`, 'utf8');
	} catch {
		return undefined; // not Linux, gone, or not ours to read
	}
}

/** The refusal of approve / reject from inside an agent: where approvals come from. */
export function approvalRefusal(verb: 'approve' | 'reject', cardId: string, why: string): string {
	return `Refusing to ${verb} card ${cardId}: this command runs inside a coding agent (${why}). Approvals come from a person: run it in your own terminal, or use VS Code or the board.`;
}
