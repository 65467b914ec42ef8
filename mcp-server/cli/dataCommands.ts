/**
 * CLI subcommands that move a backlog's data in and out: export (cards, or with --with-history the
 * whole store), import (merge cards; --from another tool's backlog: importForeign.ts), backup (the hub writes a full backup now) and restore (bring a
 * data dir back to a backup; restore.ts). Formats: core/formats/export.ts and mcp-server/hub/backupFormat.ts.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

import { parseBackup } from '../hub/backupFormat';
import { maxBackupBytes, readBounded } from '../../core/files/boundedRead';
import { BatonError } from '../../core/errors';
import { plural } from '../../core/plural';
import {
	collectExport,
	formatExport,
	importBatches,
	writeExportFile,
	writeFileAtomic,
} from '../../core/formats/export';
import { hubPaths, resolveDataDir } from '../../core/paths';
import { writeFileWhole } from '../../core/files/wholeFile';
import { pgliteAssetsDir } from '../hub/run';
import { type Command, type CommandContext, show } from './command';
import { importSources } from '../../core/formats/importers/plan';
import { cliFlags } from './flags';
import { importForeign } from './importForeign';
import { UsageError } from './output';
import { checkProject, chosenProject, noProjectFlag } from './project';
import { readRestorable, restore, restoreMigrations } from './restore';

function readInput(file: string): Buffer {
	return readBounded(file, { maxBytes: maxBackupBytes, what: 'the export' });
}

const exportFlags = cliFlags({
	out: { type: 'string', short: 'o', value: 'PATH', description: 'Write to this file (gzip if it ends in .gz)' },
	withHistory: {
		type: 'boolean',
		description: 'The whole store: cards, events, attempts, agents, settings (for baton restore)',
	},
});

const exportCommand: Command = {
	name: 'export',
	summary: 'Write every card as JSONL (header line + one card per line); to stdout unless --out',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: exportFlags.options,
	notes: 'A --with-history export is a full backup: `baton restore FILE` brings a data dir back to it.',
	async run(ctx) {
		const { out, withHistory } = exportFlags.read(ctx.values);
		if (withHistory) {
			return exportWithHistory(ctx, out);
		}
		const hub = await ctx.hub();
		const cards = await collectExport(cursor => hub.request('data/export', cursor === undefined ? {} : { cursor }));
		if (out === undefined) {
			// The export itself is the machine output, with or without --json.
			process.stdout.write(formatExport(cards));
			return 0;
		}
		const bytes = writeExportFile(out, cards);
		show(
			ctx,
			{ path: out, cards: cards.length, bytes },
			() => `Exported ${plural(cards.length, 'card')} to ${out} (${plural(bytes, 'byte')}).`,
		);
		return 0;
	},
};

/** The hub writes a full backup (one snapshot of every table); this copies it where the user asked. */
async function exportWithHistory(ctx: CommandContext, out: string | undefined): Promise<number> {
	const hub = await ctx.hub();
	const r = await hub.request('hub/backup', {});
	const gzipped = readFileSync(r.path);
	if (out === undefined) {
		process.stdout.write(gunzipSync(gzipped));
		return 0;
	}
	const bytes = out.endsWith('.gz')
		? writeFileWhole(out, gzipped)
		: writeFileAtomic(out, gunzipSync(gzipped).toString('utf8'));
	show(
		ctx,
		{ path: out, cards: r.cards, events: r.events, bytes },
		() => `Exported ${plural(r.cards, 'card')} and ${plural(r.events, 'event')} to ${out} (${plural(bytes, 'byte')}).`,
	);
	return 0;
}

const importFlags = cliFlags({
	from: {
		type: 'string',
		value: 'SOURCE',
		description: `Import another tool's backlog: ${importSources.join(', ')} (PATH is its file or folder)`,
	},
	dryRun: {
		type: 'boolean',
		description: 'With --from: print what would change (counts, id mappings, skips), write nothing',
	},
	project: { type: 'string', value: 'ID', description: "With --from: the cards' project (default: this folder's)" },
	tag: { type: 'string', value: 'TAG', description: 'With --from taskmaster: the tag to import (default: master)' },
});

const importCommand: Command = {
	name: 'import',
	summary: 'Load cards from a JSONL export, or with --from from beads, Backlog.md or Taskmaster',
	args: 'FILE|PATH',
	minArgs: 1,
	maxArgs: 1,
	options: { ...importFlags.options, ...noProjectFlag.options },
	notes: [
		'FILE may be "-" for stdin, and may be gzip-compressed; cards whose id exists are skipped. A full backup is',
		'brought back with `baton restore`. With --from: beads PATH = .beads/issues.jsonl, backlog-md PATH = the',
		'project folder, taskmaster PATH = .taskmaster/tasks/tasks.json. All of it is checked first and applied in',
		'one transaction; a second run imports nothing again (docs/guide.md, "Switching from another tool").',
	].join('\n'),
	async run(ctx) {
		const { from, dryRun, project: projectFlag, tag } = importFlags.read(ctx.values);
		const noProject = noProjectFlag.read(ctx.values).noProject;
		if (from !== undefined) {
			const project = await chosenProject(
				projectFlag === undefined ? undefined : checkProject(projectFlag, '--project'),
				noProject,
				ctx.workingProject,
			);
			return importForeign(ctx, { from, path: ctx.positionals[0] ?? '', dryRun, project, tag });
		}
		if (dryRun || projectFlag !== undefined || noProject || tag !== undefined) {
			throw new UsageError('--dry-run, --project, --no-project and --tag apply with --from only.');
		}
		const file = ctx.positionals[0] ?? '-';
		const parsed = parseBackup(readInput(file));
		if (parsed.kind === 'backup') {
			throw new BatonError(
				'invalid_input',
				`${file} is a full backup (every table, with history), not a cards export: bring a data dir back to it with \`baton restore ${file}\`, or merge cards from a plain \`baton export\`.`,
			);
		}
		const hub = await ctx.hub();
		let imported = 0;
		let skipped = 0;
		for (const batch of importBatches(parsed.cards)) {
			const r = await hub.request('data/import', { cards: batch });
			imported += r.imported;
			skipped += r.skipped;
		}
		show(ctx, { imported, skipped }, () => `Imported ${plural(imported, 'card')}, skipped ${skipped} already present.`);
		return 0;
	},
};

const backup: Command = {
	name: 'backup',
	summary: 'Write a full backup (cards, events, agents, settings) into the data dir now',
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {},
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('hub/backup', {});
		show(
			ctx,
			r,
			() =>
				`Backed up ${plural(r.cards, 'card')} and ${plural(r.events, 'event')} to ${r.path} (${plural(r.bytes, 'byte')}).`,
		);
		return 0;
	},
};

const restoreCommand: Command = {
	name: 'restore',
	summary: "Bring the data dir's store back to a backup (the current store is kept aside)",
	args: 'FILE',
	minArgs: 1,
	maxArgs: 1,
	options: {},
	notes: [
		'FILE is a backup (data dir backups/, `baton backup`, `export --with-history`) or a cards export.',
		'The file is checked first; a running hub is stopped; the current store moves to',
		'pgdata.before-restore-<time> beside it (never deleted). With DATABASE_URL, restores only into a',
		'schema that holds no backlog yet.',
	].join('\n'),
	async run(ctx) {
		const file = ctx.positionals[0] ?? '';
		const assetsDir = pgliteAssetsDir();
		const migrations = restoreMigrations(assetsDir);
		const parsed = readRestorable(file, migrations);
		const dataDir = ctx.dataDir ?? resolveDataDir();
		const stopped = await stopHub(ctx);
		const databaseUrl = process.env.DATABASE_URL?.trim() === '' ? undefined : process.env.DATABASE_URL;
		const r = await restore({
			backup: parsed,
			migrations,
			dataDir,
			databaseUrl,
			schema: process.env.BATON_PG_SCHEMA,
			assetsDir,
		});
		const where = r.mode === 'pglite' ? hubPaths(dataDir).pgdata : 'PostgreSQL';
		show(ctx, { ...r, hubStopped: stopped }, () =>
			[
				`Restored ${plural(r.cards, 'card')} and ${plural(r.events, 'event')} into ${where}.`,
				...(r.keptAside === undefined ? [] : [`The previous store is kept at ${r.keptAside}.`]),
				...(r.pausedHooks.length === 0
					? []
					: [
							`${plural(r.pausedHooks.length, 'webhook')} restored paused (${r.pausedHooks.join(', ')}), so this copy does not post to the original's receivers; \`baton hooks resume ID\` lets one deliver.`,
						]),
				...(stopped ? ['The hub was stopped for it; the next command starts a fresh one.'] : []),
			].join('\n'),
		);
		return 0;
	},
};

/** Stops this data dir's hub if one runs; true when it did. */
async function stopHub(ctx: CommandContext): Promise<boolean> {
	let hub;
	try {
		hub = await ctx.hub({ spawn: false });
	} catch (e) {
		if (BatonError.is(e, 'unavailable')) {
			return false;
		}
		throw e;
	}
	await hub.request('hub/stop', {});
	hub.close();
	return true;
}

export const dataCommands: readonly Command[] = [exportCommand, importCommand, backup, restoreCommand];
