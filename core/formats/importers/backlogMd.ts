/**
 * Reads a Backlog.md project (MrLesk/Backlog.md: `backlog/config.yml` and one
 * `task-N - Title.md` per task, YAML front matter + Markdown sections) into neutral import items
 * (plan.ts). Pure: the caller reads the folder and passes the texts. Refuses broken front matter, a
 * missing id or title and a status the project's config does not list, naming the file.
 */
import { parse as parseYaml } from 'yaml';

import { BatonError } from '../../errors';
import type { ForeignBacklog, ForeignItem } from './plan';

export interface BacklogMdFiles {
	/** `backlog/config.yml`, when the project has one (its `statuses` list). */
	config?: { file: string; text: string };
	/** Task files (from `backlog/tasks/` and `backlog/completed/`), each with its path for messages. */
	tasks: { file: string; text: string; completed?: boolean }[];
	/** Draft files (`backlog/drafts/`): not imported, each reported as skipped. */
	drafts?: string[];
}

/** Backlog.md's defaults when config.yml does not list statuses. */
const defaultStatuses = ['To Do', 'In Progress', 'Done'];

/** high / medium / low onto Baton's scale around 0 (no priority = medium). */
export function backlogMdPriority(p: string | undefined): number | undefined {
	switch ((p ?? 'medium').toLowerCase()) {
		case 'high':
			return 1;
		case 'medium':
			return 0;
		case 'low':
			return -1;
		default:
			return undefined;
	}
}

/**
 * A configured status onto Baton's: the last configured status (Backlog.md's "Done") is done, one
 * that says "block" is blocked, and every other (To Do, In Progress, a custom one) is ready; claims
 * are not imported, so "In Progress" is noted in the body.
 */
export function backlogMdStatus(
	status: string,
	configured: readonly string[],
): Pick<ForeignItem, 'status' | 'statusNote'> {
	const last = configured[configured.length - 1];
	if (status === last || /^(done|completed?)$/i.test(status)) {
		return { status: 'done' };
	}
	if (/block/i.test(status)) {
		return { status: 'blocked', statusNote: `"${status}" in Backlog.md when imported.` };
	}
	if (status === configured[0]) {
		return { status: 'ready' };
	}
	return { status: 'ready', statusNote: `Was "${status}" in Backlog.md when imported (claims are not imported).` };
}

function fail(file: string, why: string): never {
	throw new BatonError('invalid_input', `${file}: ${why}; nothing was imported.`, { file });
}

function yamlOf(file: string, text: string): unknown {
	try {
		return parseYaml(text);
	} catch (e) {
		return fail(file, `the YAML does not parse (${(e as Error).message.split('\n')[0] ?? ''})`);
	}
}

const strings = (v: unknown): string[] =>
	Array.isArray(v)
		? v.filter(x => x !== null && x !== undefined).map(String)
		: typeof v === 'string' && v !== ''
			? [v]
			: [];

/** The statuses config.yml lists, or Backlog.md's defaults. */
function configuredStatuses(config: BacklogMdFiles['config']): string[] {
	if (config === undefined) {
		return defaultStatuses;
	}
	const parsed = yamlOf(config.file, config.text);
	const list = typeof parsed === 'object' && parsed !== null ? (parsed as { statuses?: unknown }).statuses : undefined;
	const statuses = strings(list);
	return statuses.length > 0 ? statuses : defaultStatuses;
}

export function parseBacklogMd(files: BacklogMdFiles): ForeignBacklog {
	const statuses = configuredStatuses(files.config);
	const items = files.tasks.map(t => parseTask(t.file, t.text, statuses, t.completed === true));
	// Older files write `task-1` where newer ones write `TASK-1`: links find their task either way.
	const byLower = new Map(items.map(i => [i.ref.toLowerCase(), i.ref]));
	const canonical = (ref: string): string => byLower.get(ref.toLowerCase()) ?? ref;
	for (const i of items) {
		i.dependsOn = i.dependsOn.map(canonical);
		if (i.parent !== undefined) {
			i.parent = canonical(i.parent);
		}
	}
	const skips = (files.drafts ?? []).map(file => ({
		ref: /(?:^|\/)(draft-[\w.]+)/i.exec(file)?.[1] ?? file,
		where: file,
		reason: 'a draft: drafts are not imported (promote it in Backlog.md first: backlog draft promote ID)',
	}));
	return { source: 'backlog-md', items, skips };
}

function parseTask(file: string, text: string, statuses: readonly string[], completed: boolean): ForeignItem {
	const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
	if (match === null) {
		return fail(file, 'no YAML front matter (--- … ---) at the top');
	}
	const front = yamlOf(file, match[1] ?? '');
	if (typeof front !== 'object' || front === null || Array.isArray(front)) {
		return fail(file, 'the front matter is not a YAML mapping');
	}
	const fm = front as Record<string, unknown>;
	const ref = typeof fm.id === 'string' || typeof fm.id === 'number' ? String(fm.id).trim() : '';
	if (ref === '') {
		return fail(file, 'the front matter has no id');
	}
	if (typeof fm.title !== 'string' || fm.title.trim() === '') {
		return fail(file, 'the front matter has no title');
	}
	const rawStatus =
		typeof fm.status === 'string' ? fm.status : completed ? (statuses[statuses.length - 1] ?? 'Done') : '';
	if (!statuses.includes(rawStatus)) {
		return fail(file, `status "${rawStatus}" is not one of the project's statuses (${statuses.join(', ')})`);
	}
	const priority = backlogMdPriority(typeof fm.priority === 'string' ? fm.priority : undefined);
	if (priority === undefined) {
		return fail(file, `priority "${String(fm.priority)}" is not high, medium or low`);
	}
	const { acceptance, rest } = splitAcceptance(text.slice(match[0].length));
	const assignees = strings(fm.assignee);
	const parent =
		typeof fm.parent_task_id === 'string' ? fm.parent_task_id : typeof fm.parent === 'string' ? fm.parent : undefined;
	const milestone = typeof fm.milestone === 'string' ? fm.milestone : undefined;
	const body = [
		rest,
		...(assignees.length > 0 ? ['', `Assignee: ${assignees.join(', ')}`] : []),
		...(milestone !== undefined ? ['', `Milestone: ${milestone}`] : []),
	].join('\n');
	const created = dateOf(fm.created_date);
	const updated = dateOf(fm.updated_date);
	return {
		ref,
		where: file,
		title: fm.title,
		body,
		...backlogMdStatus(rawStatus, statuses),
		priority,
		dependsOn: strings(fm.dependencies),
		...(parent === undefined || parent === '' ? {} : { parent }),
		acceptance,
		labels: strings(fm.labels),
		...(created === undefined ? {} : { createdAt: created }),
		...(updated === undefined ? {} : { updatedAt: updated }),
	};
}

/** Backlog.md writes dates as `2025-06-09 14:30` (local time, quoted or not). */
function dateOf(v: unknown): string | undefined {
	const s = v instanceof Date ? v.toISOString() : typeof v === 'string' ? v.trim().replace(' ', 'T') : undefined;
	return s === undefined || Number.isNaN(new Date(s).getTime()) ? undefined : new Date(s).toISOString();
}

/**
 * The acceptance criteria (`- [ ] #1 text` between `<!-- AC:BEGIN -->` and `<!-- AC:END -->`, or
 * the list under `## Acceptance Criteria` in older files; a checked one becomes `[x] text`) and the rest of the Markdown without them
 * and without Backlog.md's section markers.
 */
function splitAcceptance(markdown: string): { acceptance: string[]; rest: string } {
	const lines = markdown.split(/\r?\n/);
	const acceptance: string[] = [];
	const rest: string[] = [];
	let inAc = false;
	for (const line of lines) {
		if (/^##\s+Acceptance Criteria\s*$/i.test(line)) {
			inAc = true;
			continue;
		}
		if (inAc && (/^##\s/.test(line) || /<!--\s*AC:END\s*-->/.test(line))) {
			inAc = false;
			if (!/^##\s/.test(line)) {
				continue;
			}
		}
		if (inAc) {
			// Baton's criteria are plain text: a checked one (`- [x] #1 …`) keeps its mark as a `[x] ` prefix.
			const item = /^\s*[-*]\s*\[([ xX])\]\s*(?:#\d+\s+)?(.*)$/.exec(line);
			const text = item?.[2]?.trim() ?? '';
			if (text !== '') {
				acceptance.push(item?.[1] === ' ' ? text : `[x] ${text}`);
			}
			continue;
		}
		if (/^\s*<!--\s*(SECTION:[A-Z_]+|AC|DOD):(BEGIN|END)\s*-->\s*$/.test(line)) {
			continue;
		}
		rest.push(line);
	}
	return { acceptance, rest: rest.join('\n').trim() };
}
