/**
 * What an agent left running once its card's agent ended, outside its process group: a child it started
 * in a session of its own (`setsid`, Node's `detached: true`) escapes the group kill of spawnAgent.ts, and
 * without a sandbox's PID namespace (`--no-sandbox`, no bubblewrap, Seatbelt) it would go on in the card's
 * worktree after the card ends. The sweep reads Linux /proc for processes of this user that are the card's:
 * - their environment names the seat: BATON_CARD_ID=<card> and BATON_SESSION=<the seat's session>
 *   (mcpConfigFile.ts agentEnv), which no process of a person or of another card has; or
 * - their working directory is inside the card's own worktree (a child that ran `env -i`), when they
 *   also have no controlling terminal (a person's shell in the worktree has one; the agent, started in a
 *   session of its own, has none) and were left behind: their parent is init, a subreaper above this
 *   supervisor (where an orphan of the agent goes), or itself one of the card's. The hub is never one
 *   (it may have been started from the worktree), nor its check running there after complete (the hub's
 *   child); nor is a process naming another card.
 * Each is SIGKILLed right after it was checked again (same start time, still the card's), a few passes
 * while some are found (a parent may fork between two reads).
 * Where /proc is absent (macOS, Seatbelt) it finds nothing: there such a child still outlives its card.
 * Must not: signal this supervisor or one of its ancestors, a process of another user or another card, or
 * a pid it has not checked just before; look at a worktree it is not given (a card without its own
 * worktree works in the main checkout, where only the environment tells).
 */
import { readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

import { hubPaths } from '../../core/paths';

export interface SweepTarget {
	cardId: string;
	/** The session the seat claimed the card under (BATON_SESSION of its agent). */
	session: string;
	/** The card's own worktree; undefined when it has none (its agent ran in the main checkout). */
	worktree: string | undefined;
	/** The data dir: its hub (hub.json's pid) is never swept, even when it was started in the worktree. */
	dataDir: string;
}

/** One process as /proc shows it, for the sweep's rules. */
interface Proc {
	pid: number;
	ppid: number;
	/** Field 22 of stat: with the pid, one process and not a later one that got its pid. */
	start: string;
	tty: number;
	env: 'card' | 'other card' | 'none';
	inWorktree: boolean;
}

const maxPasses = 5;

/** Kills what the card's agent left running (see above); returns how many processes it killed. */
export function sweepCard(target: SweepTarget): number {
	const uid = process.getuid?.();
	if (uid === undefined) {
		return 0;
	}
	const roots = worktreePaths(target.worktree);
	// Where an orphan of the agent goes: init, or a subreaper above this supervisor (which is none).
	const adopters = ancestors(process.ppid);
	const spared = new Set([process.pid, ...adopters]);
	const hub = hubPidOf(target.dataDir);
	if (hub !== undefined) {
		spared.add(hub);
	}
	const killed = new Set<string>();
	for (let pass = 0; pass < maxPasses; pass++) {
		const found = theCards(snapshot(target, roots, uid), spared, adopters);
		let fresh = 0;
		for (const p of found) {
			// Checked again just before the signal: the same process (pid and start time), still the card's.
			const now = readProc(p.pid, target, roots, uid);
			if (now?.start !== p.start || !(now.env === 'card' || leftInWorktree(now))) {
				continue;
			}
			try {
				process.kill(p.pid, 'SIGKILL');
			} catch {
				continue; // Gone in between.
			}
			const key = `${p.pid}:${p.start}`;
			if (!killed.has(key)) {
				killed.add(key);
				fresh++;
			}
		}
		if (fresh === 0) {
			break;
		}
	}
	return killed.size;
}

/** The card's processes among `all` (the rules of the header), the `spared` left out. */
function theCards(all: Map<number, Proc>, spared: ReadonlySet<number>, adopters: ReadonlySet<number>): Proc[] {
	const verdict = new Map<number, boolean>();
	const isCards = (p: Proc, depth: number): boolean => {
		const known = verdict.get(p.pid);
		if (known !== undefined) {
			return known;
		}
		let yes = false;
		if (spared.has(p.pid)) {
			yes = false;
		} else if (p.env === 'card') {
			yes = true;
		} else if (leftInWorktree(p)) {
			const parent = all.get(p.ppid);
			// Not a child of the hub (its check), though the hub itself is spared.
			yes = adopters.has(p.ppid) || (parent !== undefined && depth < 64 && isCards(parent, depth + 1));
		}
		verdict.set(p.pid, yes);
		return yes;
	};
	return [...all.values()].filter(p => isCards(p, 0));
}

/** Stands in the worktree with no terminal, naming no other card (its parent is checked by theCards). */
function leftInWorktree(p: Proc): boolean {
	return p.env === 'none' && p.inWorktree && p.tty === 0;
}

/** This user's live processes that name the card or stand in its worktree. */
function snapshot(target: SweepTarget, roots: readonly string[], uid: number): Map<number, Proc> {
	const all = new Map<number, Proc>();
	let entries: string[];
	try {
		entries = readdirSync('/proc');
	} catch {
		return all; // No /proc: nothing can be told.
	}
	for (const entry of entries) {
		if (/^\d+$/.test(entry)) {
			const p = readProc(Number(entry), target, roots, uid);
			if (p !== undefined) {
				all.set(p.pid, p);
			}
		}
	}
	return all;
}

/**
 * One process of user `uid` that names the card or stands in its worktree, alive (not a zombie, no KILL
 * pending), or undefined. Two reads rule out any other (they fail on another user's): the sweep reads
 * every process while the supervisor waits.
 */
function readProc(pid: number, target: SweepTarget, roots: readonly string[], uid: number): Proc | undefined {
	try {
		const env = envOf(pid, target);
		const inWorktree = env === 'none' && roots.length > 0 && inside(cwdOf(pid), roots);
		if (env !== 'card' && !inWorktree) {
			return undefined;
		}
		const status = readFileSync(`/proc/${pid}/status`, 'utf8');
		if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid || dying(status)) {
			return undefined;
		}
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		// comm (field 2) may hold spaces and parentheses: the fields from 3 on follow its last ')'.
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const start = fields[19];
		if (fields[0] === 'Z' || fields[0] === 'X' || start === undefined) {
			return undefined;
		}
		return { pid, ppid: Number(fields[1]), start, tty: Number(fields[4]), env, inWorktree };
	} catch {
		return undefined; // Gone, or not ours to read.
	}
}

/** Whether a KILL is already pending for it (it is ending: the group kill reached it). */
function dying(status: string): boolean {
	return ['SigPnd', 'ShdPnd'].some(name => {
		const mask = new RegExp(`^${name}:\\s+([0-9a-f]+)`, 'm').exec(status)?.[1] ?? '0';
		// SIGKILL is 9: bit 8 of the mask, the lowest bit of its third hex digit from the right.
		return (parseInt(mask.slice(-3, -2) || '0', 16) & 1) === 1;
	});
}

function envOf(pid: number, target: SweepTarget): Proc['env'] {
	let entries: string[];
	try {
		entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
	} catch {
		return 'none';
	}
	const card = entries.find(e => e.startsWith('BATON_CARD_ID='));
	if (card === undefined) {
		return 'none';
	}
	if (card !== `BATON_CARD_ID=${target.cardId}`) {
		return 'other card';
	}
	// The card's, under another seat's session (an earlier attempt): only its worktree can tell.
	return entries.includes(`BATON_SESSION=${target.session}`) ? 'card' : 'none';
}

function cwdOf(pid: number): string | undefined {
	try {
		// A removed folder reads as "<path> (deleted)": still where it stands.
		return readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '');
	} catch {
		return undefined;
	}
}

/** Whether `path` is `root` or below it: /wt/A holds /wt/A/src, never /wt/AB. */
export function inside(path: string | undefined, roots: readonly string[]): boolean {
	return (
		path !== undefined && roots.some(root => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep))
	);
}

/** The worktree as given and as the kernel names it (a symlink on the way resolved). */
function worktreePaths(worktree: string | undefined): string[] {
	if (worktree === undefined || worktree === '') {
		return [];
	}
	const given = resolve(worktree);
	let real = given;
	try {
		real = realpathSync(given);
	} catch {
		// Removed already: its processes' cwd reads as the path it had.
	}
	// Never the root of the file system: it would hold every process.
	return [...new Set([given, real])].filter(p => p !== sep);
}

function hubPidOf(dataDir: string): number | undefined {
	try {
		const { pid } = JSON.parse(readFileSync(hubPaths(dataDir).hubJson, 'utf8')) as { pid?: unknown };
		return typeof pid === 'number' ? pid : undefined;
	} catch {
		return undefined;
	}
}

/** `pid`, every process above it, and init (what started the supervisor): never swept. */
function ancestors(pid: number): Set<number> {
	const found = new Set<number>([1]);
	for (let p = pid; p > 1 && !found.has(p);) {
		found.add(p);
		try {
			const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
			p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
		} catch {
			break;
		}
	}
	return found;
}
