/**
 * `baton init`: sets a repository up for its agents. Writes the `baton` MCP server
 * entry into the project config of each MCP client found there or named with --client (merged by
 * core/formats/mcpConfig.ts, shared with the extension), and the work-loop section into AGENTS.md or CLAUDE.md
 * (mcp-server/cli/agentsSection.ts). Reads and checks every file before writing any, so a refused file leaves
 * all of them as they were; writes each atomically (temp file + rename). Idempotent: a second run
 * finds every file unchanged. Needs no hub and starts none, unless --worktrees turns workspaces on
 * for the repository's project (workspaceSettings.ts; checked before any file is written).
 */
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { type InstructionsFile, chooseInstructionsFile, upsertSection } from './agentsSection';
import { findGitRepo } from '../../core/client/gitRepo';
import { BatonError } from '../../core/errors';
import { plural } from '../../core/plural';
import { writeFileWhole } from '../../core/files/wholeFile';
import {
	type McpClient,
	type McpLaunch,
	currentEntry,
	mcpClientIds,
	mcpClients,
	mergeMcpConfig,
} from '../../core/formats/mcpConfig';
import type { Command } from './command';
import { cliFlags } from './flags';
import {
	type LaunchKind,
	type RunningBaton,
	checkLaunch,
	detectLaunch,
	isLaunchKind,
	launchAdvice,
	launchCheckMs,
	launchCommand,
	launchLine,
	runningBaton,
} from './launch';
import { UsageError, printJson } from './output';
import { unifiedDiff } from './textDiff';
import { applyWorkspaceSettings, checkFlags, readCheckFlags, workspaceLines } from './workspaceSettings';

const initFlags = cliFlags({
	dir: {
		type: 'string',
		value: 'PATH',
		description: 'Repository to set up (default: the git root of the cwd, else the cwd)',
	},
	client: {
		type: 'string',
		multiple: true,
		value: 'NAME',
		description: 'claude-code, cursor, vscode or all; repeatable (default: the clients found in the repository)',
	},
	launch: {
		type: 'string',
		value: 'HOW',
		description:
			'How agents start Baton: npx (npx -y baton-mcp mcp), baton (the baton on PATH), node (this copy, absolute path); default: the way this Baton was started',
	},
	instructions: {
		type: 'string',
		value: 'FILE',
		description:
			'AGENTS.md, CLAUDE.md or none (default: the one with the section, else CLAUDE.md if it exists and does not point to AGENTS.md, else AGENTS.md)',
	},
	dryRun: { type: 'boolean', description: 'Show the changes (diffs, new files in full) and write nothing' },
	worktrees: {
		type: 'boolean',
		description: "Also turn workspaces on for the repository's project, as baton settings --worktrees on does",
	},
});

function isInstructionsChoice(v: string): v is InstructionsFile | 'none' {
	return v === 'AGENTS.md' || v === 'CLAUDE.md' || v === 'none';
}

export type InitAction = 'create' | 'update' | 'unchanged';

interface PlannedFile {
	/** Relative to the repository, with forward slashes. */
	path: string;
	action: InitAction;
	/** What the file is for and why it was chosen. */
	purpose: string;
	before: string | undefined;
	after: string;
}

/** The launch line written into every config: see docs/guide.md "Set up a repository". */
export function launchFor(
	kind: LaunchKind,
	dataDir: string | undefined,
	run: RunningBaton = runningBaton(),
): McpLaunch {
	const env: Record<string, string> = dataDir === undefined ? {} : { BATON_DATA_DIR: resolve(dataDir) };
	return { ...launchCommand(kind, run), env };
}

async function readText(file: string): Promise<string | undefined> {
	try {
		return await readFile(file, 'utf8');
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
			return undefined;
		}
		throw new BatonError('invalid_input', `Cannot read ${file}: ${(e as Error).message}`, { file });
	}
}

async function exists(path: string, kind?: 'dir'): Promise<boolean> {
	try {
		const s = await stat(path);
		return kind === 'dir' ? s.isDirectory() : true;
	} catch {
		return false;
	}
}

/** What marks a repository as used with each client; the first match is named in the output. */
const clientMarks: Record<McpClient, readonly { path: string; dir?: true }[]> = {
	'claude-code': [{ path: '.mcp.json' }, { path: '.claude', dir: true }, { path: 'CLAUDE.md' }],
	cursor: [{ path: '.cursor/mcp.json' }, { path: '.cursor', dir: true }, { path: '.cursorrules' }],
	vscode: [{ path: '.vscode/mcp.json' }, { path: '.vscode', dir: true }],
};

/** The clients `dir` shows signs of, each with the mark found (e.g. ".claude/"). */
export async function detectClients(dir: string): Promise<{ client: McpClient; found: string }[]> {
	const found: { client: McpClient; found: string }[] = [];
	for (const client of mcpClientIds) {
		for (const mark of clientMarks[client]) {
			if (await exists(join(dir, mark.path), mark.dir === true ? 'dir' : undefined)) {
				found.push({ client, found: mark.dir === true ? `${mark.path}/` : mark.path });
				break;
			}
		}
	}
	return found;
}

function readClients(values: string[] | undefined): McpClient[] | undefined {
	if (values === undefined || values.length === 0) {
		return undefined;
	}
	const names = values.flatMap(v => v.split(',')).map(v => v.trim());
	const out = new Set<McpClient>();
	for (const name of names) {
		if (name === 'all') {
			mcpClientIds.forEach(c => out.add(c));
		} else if ((mcpClientIds as readonly string[]).includes(name)) {
			out.add(name as McpClient);
		} else {
			throw new UsageError(`--client ${name}: use claude-code, cursor, vscode or all.`);
		}
	}
	return [...out];
}

async function repositoryDir(flag: string | undefined): Promise<string> {
	if (flag !== undefined) {
		const dir = resolve(flag);
		if (!(await exists(dir, 'dir'))) {
			throw new BatonError('invalid_input', `--dir ${flag}: ${dir} is not a folder.`, { dir });
		}
		return dir;
	}
	return (await findGitRepo(process.cwd()))?.root ?? process.cwd();
}

function planned(path: string, purpose: string, before: string | undefined, after: string): PlannedFile {
	const action: InitAction = before === undefined ? 'create' : before === after ? 'unchanged' : 'update';
	return { path, action, purpose, before, after };
}

/** Writes `text` to `file` whole or not at all (temp file beside it, fsync, rename); keeps an existing file's mode. */
async function writeAtomic(file: string, text: string): Promise<void> {
	const target = (await exists(file)) ? await realpath(file) : file;
	await mkdir(dirname(target), { recursive: true });
	const mode = await stat(target).then(
		s => s.mode & 0o777,
		() => undefined,
	);
	// Whole or not at all (core/files/wholeFile.ts): every byte, synced, then renamed over the target.
	writeFileWhole(target, text, mode === undefined ? { createMode: 0o666 } : { mode });
}

function preview(file: PlannedFile): string {
	if (file.before === undefined) {
		return [
			`+++ b/${file.path} (new file)`,
			...file.after
				.replace(/\n$/, '')
				.split('\n')
				.map(l => `+${l}`),
		].join('\n');
	}
	return unifiedDiff(file.path, file.before.replace(/\r\n/g, '\n'), file.after.replace(/\r\n/g, '\n'));
}

export const initCommand: Command = {
	name: 'init',
	summary: "Set up this repository for agents: Baton's MCP entry for its clients and the work loop in AGENTS.md",
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: { ...initFlags.options, ...checkFlags.options },
	notes: [
		'Clients found: Claude Code (.mcp.json, .claude/ or CLAUDE.md), Cursor (.cursor/ or .cursorrules),',
		'VS Code (.vscode/); none found: Claude Code. Existing entries of other servers and comments are kept;',
		'a file that is not JSON(C) is refused and nothing is written. An existing baton entry is kept',
		'unless --launch or --data-dir (BATON_DATA_DIR in the entries) is given. Run it again any time.',
		'Default launch: npx when this Baton ran through npx, baton when the baton on PATH is this install,',
		'else node and this copy by absolute path. The command is run with --version first; one that does',
		'not start is refused and nothing is written.',
	].join('\n'),
	async run(ctx) {
		const flags = initFlags.read(ctx.values);
		const check = readCheckFlags(ctx.values);
		if (!flags.worktrees && Object.keys(check).length > 0) {
			throw new UsageError("--check and --check-timeout go with --worktrees: checks run in the cards' worktrees.");
		}
		if (flags.launch !== undefined && !isLaunchKind(flags.launch)) {
			throw new UsageError(`--launch ${flags.launch}: use npx, baton or node.`);
		}
		const instructionsFlag = flags.instructions;
		if (instructionsFlag !== undefined && !isInstructionsChoice(instructionsFlag)) {
			throw new UsageError(`--instructions ${instructionsFlag}: use AGENTS.md, CLAUDE.md or none.`);
		}
		const dir = await repositoryDir(flags.dir);
		const run = runningBaton();
		const detected = detectLaunch(run);
		const launchKind: LaunchKind = flags.launch ?? detected.kind;
		const launch = launchFor(launchKind, ctx.dataDir, run);
		const launchChosen = flags.launch !== undefined || ctx.dataDir !== undefined;
		const launchWhy = flags.launch === undefined ? detected.why : `--launch ${flags.launch}`;
		const notes: string[] = [];

		const asked = readClients(flags.client);
		let clients: { client: McpClient; why: string }[];
		if (asked !== undefined) {
			clients = asked.map(client => ({ client, why: 'asked' }));
		} else {
			clients = (await detectClients(dir)).map(d => ({ client: d.client, why: `found ${d.found}` }));
			if (clients.length === 0) {
				clients = [{ client: 'claude-code', why: 'default: no client found' }];
				notes.push(
					'No MCP client found (.mcp.json, .claude/, CLAUDE.md, .cursor/, .cursorrules, .vscode/): configured Claude Code. Add others with --client cursor, --client vscode or --client all.',
				);
			}
		}

		// Every file is read and merged before anything is written: a refusal leaves the repository as it was.
		const files: PlannedFile[] = [];
		let writesEntry = false;
		for (const { client, why } of clients) {
			const { file, label } = mcpClients[client];
			const before = await readText(join(dir, file));
			const merged = mergeMcpConfig(client, before, launch, file);
			// An entry someone chose (another --launch, the extension's command) stays unless a flag says otherwise.
			const keep =
				!launchChosen && before !== undefined && merged !== before && currentEntry(client, before) !== undefined;
			writesEntry ||= !keep && merged !== before;
			files.push(
				keep
					? planned(file, `${label} MCP config (${why}; its baton entry kept: --launch replaces it)`, before, before)
					: planned(file, `${label} MCP config (${why})`, before, merged),
			);
		}
		if (instructionsFlag !== 'none') {
			const agents = await readText(join(dir, 'AGENTS.md'));
			const claude = await readText(join(dir, 'CLAUDE.md'));
			const target: InstructionsFile = instructionsFlag ?? chooseInstructionsFile(agents, claude);
			const before = target === 'AGENTS.md' ? agents : claude;
			files.push(planned(target, "the agents' work loop", before, upsertSection(before, target)));
		}

		const changes = files.filter(f => f.action !== 'unchanged');
		// The entry written must start: run it (with --version) before writing, as the MCP client will.
		if (writesEntry) {
			await checkLaunch(
				launch,
				process.env,
				launchCheckMs[launchKind],
				`Nothing was written. ${launchAdvice[launchKind]}`,
			);
		}
		// Before any file is written: a repository that cannot have workspaces is refused with nothing changed.
		const workspaces =
			flags.worktrees && !flags.dryRun
				? {
						...(await applyWorkspaceSettings(ctx, { project: undefined, patch: { worktrees: true, ...check } }, dir)),
						// Which path a completed card takes follows the backlog's default review.
						review: (await (await ctx.hub()).request('settings/get', {})).review,
					}
				: undefined;
		if (!flags.dryRun) {
			for (const f of changes) {
				await writeAtomic(join(dir, f.path), f.after);
			}
		}
		if (ctx.json) {
			printJson(ctx.output, {
				dir,
				dryRun: flags.dryRun,
				launch,
				launchWhy,
				files: files.map(f => ({
					path: f.path,
					action: f.action,
					purpose: f.purpose,
					...(flags.dryRun && f.action !== 'unchanged' ? { preview: preview(f) } : {}),
				})),
				changed: changes.length,
				notes,
				...(workspaces === undefined ? {} : { workspaces: workspaces.settings }),
			});
			return 0;
		}
		const width = Math.max(...files.map(f => f.path.length));
		const lines = [
			`baton init in ${dir}${flags.dryRun ? ' (dry run)' : ''}`,
			...files.map(f => `  ${f.action.padEnd(9)}  ${f.path.padEnd(width)}  ${f.purpose}`),
			...notes,
			`Agents start Baton with: ${launchLine(launch)}${Object.entries(launch.env)
				.map(([k, v]) => ` (${k}=${v})`)
				.join('')} (${launchWhy})`,
		];
		if (flags.dryRun) {
			lines.push(...changes.map(f => `\n${preview(f)}`));
		}
		lines.push(
			changes.length === 0
				? 'Nothing to change.'
				: flags.dryRun
					? `Dry run: ${plural(changes.length, 'file')} would change; nothing was written.`
					: `Wrote ${plural(changes.length, 'file')}. Commit them so every agent in this repository gets Baton.`,
		);
		if (workspaces !== undefined) {
			lines.push(
				`Workspaces turned on (as baton settings --worktrees on):`,
				...workspaceLines(workspaces.settings, workspaces.recorded, workspaces.review).map(l => `  ${l}`),
			);
		} else if (flags.worktrees) {
			lines.push('Dry run: workspaces would be turned on for this repository (baton settings --worktrees on).');
		}
		ctx.output.out(lines.join('\n'));
		return 0;
	},
};
