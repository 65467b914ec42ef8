/**
 * `baton import --from beads|backlog-md|taskmaster PATH`: reads the foreign backlog
 * from disk (the only node-only part), has core/importers parse and plan it against what the store
 * holds, and applies the plan in ONE data/import call that fails whole on any clash, so an import is
 * applied entirely or not at all. `--dry-run` prints the same plan and writes nothing. Parsing and
 * mapping rules live in core/formats/importers/, not here.
 */
import { type Stats, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

import { isSymlink, leavesFolder, readBounded, readBoundedText } from '../../core/files/boundedRead';
import { parseBacklogMd } from '../../core/formats/importers/backlogMd';
import { parseBeads } from '../../core/formats/importers/beads';
import {
	type ForeignBacklog,
	type ImportPlan,
	type ImportSkip,
	type ImportSource,
	describePlan,
	importSources,
	maxImportBytes,
	planImport,
} from '../../core/formats/importers/plan';
import { parseTaskmaster } from '../../core/formats/importers/taskmaster';
import { BatonError } from '../../core/errors';
import { collectExport } from '../../core/formats/export';
import { type CommandContext, show } from './command';
import { UsageError } from './output';
import { type ProjectChoice, anyProject } from './project';

export interface ForeignImportOptions {
	from: string;
	path: string;
	dryRun: boolean;
	project: ProjectChoice;
	tag: string | undefined;
}

export function checkSource(from: string): ImportSource {
	const source = importSources.find(s => s === from);
	if (source === undefined) {
		throw new UsageError(`--from ${from}: known sources are ${importSources.join(', ')}.`);
	}
	return source;
}

function statOf(path: string): Stats {
	try {
		return statSync(path);
	} catch (e) {
		throw new UsageError(`Cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`);
	}
}

/**
 * The file at `path`, or the first of `inside` when `path` is a folder (not one a symlink leads out
 * of it); read with the import limit, and only when it is a regular file (boundedRead.ts).
 */
function readSourceFile(path: string, inside: readonly string[]): { file: string; text: string } {
	let file = path;
	if (statOf(path).isDirectory()) {
		const found = inside.map(p => join(path, p)).find(p => exists(p) || isSymlink(p));
		if (found === undefined) {
			throw new UsageError(`${path} is a folder without ${inside.join(' or ')}.`);
		}
		if (leavesFolder(found, path)) {
			throw new BatonError(
				'invalid_input',
				`${found} is a symlink out of ${path}; Baton does not follow it. Name the file itself to import it; nothing was imported.`,
				{ file: found },
			);
		}
		file = found;
	}
	try {
		return { file, text: readBoundedText(file, { maxBytes: maxImportBytes, what: 'the import file' }) };
	} catch (e) {
		if (!BatonError.is(e, 'too_large')) {
			throw e;
		}
		const size = statOf(file).size;
		throw new BatonError(
			'too_large',
			`${file} is ${size} bytes; an import reads at most ${maxImportBytes} (4 MiB). Nothing was imported.`,
			{ file, bytes: size },
		);
	}
}

function exists(path: string): boolean {
	try {
		statSync(path);
		return true;
	} catch {
		return false;
	}
}

/**
 * Where a Backlog.md project keeps its tasks and config, found as Backlog.md finds them: the folder
 * `backlog_directory` names in PATH/backlog.config.yml, else PATH/backlog/, else PATH/.backlog/
 * (`backlog init --backlog-dir .backlog`), else PATH itself when it is that folder.
 */
export function backlogMdLayout(path: string): { root: string; config: string | undefined } {
	if (!exists(path)) {
		throw new BatonError('invalid_input', `${path} does not exist: give the folder that holds backlog/ or .backlog/.`, {
			path,
		});
	}
	const rootConfig = join(path, 'backlog.config.yml');
	const named = exists(rootConfig)
		? /^\s*(?:backlog_directory|backlogDirectory)\s*:\s*['"]?([^'"#\n]+?)['"]?\s*(?:#.*)?$/m.exec(
				readBounded(rootConfig, { maxBytes: maxImportBytes, what: 'the Backlog.md config' }).toString('utf8'),
			)?.[1]
		: undefined;
	const candidates = [
		...(named === undefined ? [] : [join(path, named)]),
		join(path, 'backlog'),
		join(path, '.backlog'),
		path,
	];
	const root = candidates.find(c => exists(join(c, 'tasks')));
	if (root === undefined) {
		throw new BatonError(
			'invalid_input',
			`${path} is not a Backlog.md project: no tasks/ folder in ${named === undefined ? '' : `${named}/, `}backlog/, .backlog/ or ${path} itself.`,
			{ path },
		);
	}
	const config = [rootConfig, join(root, 'config.yml'), join(root, 'config.yaml')].find(exists);
	return { root, config };
}

/** A Backlog.md project (backlogMdLayout finds it); its drafts are listed, not read, and reported as skipped. */
function readBacklogMd(path: string): ForeignBacklog {
	const { root, config } = backlogMdLayout(path);
	let total = 0;
	const skipped: ImportSkip[] = [];
	const read = (file: string): string => {
		let data: Buffer;
		try {
			data = readBounded(file, { maxBytes: maxImportBytes - total, what: 'the task file' });
		} catch (e) {
			if (BatonError.is(e, 'too_large')) {
				throw new BatonError(
					'too_large',
					`The task files under ${root} pass ${maxImportBytes} bytes (4 MiB) at ${file}; nothing was imported.`,
					{ file },
				);
			}
			throw e;
		}
		total += data.length;
		return data.toString('utf8');
	};
	const inProject = (file: string): boolean => {
		if (!leavesFolder(file, root)) {
			return true;
		}
		skipped.push({
			ref: basename(file),
			where: file,
			reason: `a symlink out of ${root}; not followed, nothing read from it`,
		});
		return false;
	};
	const tasksIn = (folder: string, completed: boolean): { file: string; text: string; completed: boolean }[] =>
		exists(folder)
			? readdirSync(folder)
					.filter(n => n.endsWith('.md'))
					.sort()
					.map(n => join(folder, n))
					.filter(inProject)
					.map(file => ({ file, text: read(file), completed }))
			: [];
	const drafts = join(root, 'drafts');
	const parsed = parseBacklogMd({
		...(config !== undefined && !leavesFolder(config, path) ? { config: { file: config, text: read(config) } } : {}),
		tasks: [...tasksIn(join(root, 'tasks'), false), ...tasksIn(join(root, 'completed'), true)],
		drafts: exists(drafts)
			? readdirSync(drafts)
					.filter(n => n.endsWith('.md'))
					.sort()
					.map(n => join(drafts, n))
			: [],
	});
	return { ...parsed, skips: [...skipped, ...parsed.skips] };
}

function readForeign(source: ImportSource, path: string, tag: string | undefined): ForeignBacklog {
	switch (source) {
		case 'beads': {
			const { file, text } = readSourceFile(path, [join('.beads', 'issues.jsonl'), 'issues.jsonl']);
			return parseBeads(text, basename(file));
		}
		case 'taskmaster': {
			const { file, text } = readSourceFile(path, [
				join('.taskmaster', 'tasks', 'tasks.json'),
				join('tasks', 'tasks.json'),
				'tasks.json',
			]);
			return parseTaskmaster(text, basename(file), tag);
		}
		case 'backlog-md':
			return readBacklogMd(path);
	}
}

/** The machine answer of an import (dry run or not). */
function planJson(plan: ImportPlan, dryRun: boolean): Record<string, unknown> {
	return {
		source: plan.source,
		dryRun,
		imported: dryRun ? 0 : plan.counts.cards,
		cards: plan.counts.cards,
		dependencies: plan.counts.dependencies,
		byStatus: plan.counts.byStatus,
		already: plan.already.length,
		mapped: plan.mapped,
		skips: plan.skips,
	};
}

export async function importForeign(ctx: CommandContext, o: ForeignImportOptions): Promise<number> {
	const source = checkSource(o.from);
	if (o.tag !== undefined && source !== 'taskmaster') {
		throw new UsageError('--tag applies to --from taskmaster only.');
	}
	// Everything that can refuse the source is read and parsed before a hub is asked anything.
	const backlog = readForeign(source, o.path, o.tag);
	const hub = await ctx.hub();
	const settings = await hub.request('settings/get', {});
	const existing = await collectExport(cursor => hub.request('data/export', cursor === undefined ? {} : { cursor }));
	const plan = planImport(backlog, existing, {
		project: o.project === anyProject ? null : o.project,
		review: settings.review,
		now: new Date(),
	});
	if (!o.dryRun && plan.cards.length > 0) {
		await hub.request('data/import', { cards: plan.cards, onConflict: 'fail' });
	}
	show(ctx, planJson(plan, o.dryRun), () => describePlan(plan, !o.dryRun));
	return 0;
}
