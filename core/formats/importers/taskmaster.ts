/**
 * Reads a Taskmaster `tasks.json` (eyaltoledano/claude-task-master: the tagged format
 * `{ "<tag>": { "tasks": [...] } }` or the legacy `{ "tasks": [...] }`) into neutral import items
 * (plan.ts); sub-tasks (`1.2`) become items of their own whose parent is their task. Pure: the
 * caller reads the file. Refuses broken JSON, a task without id or title and an unknown status.
 */
import { BatonError } from '../../errors';
import type { ForeignBacklog, ForeignItem, ImportSkip } from './plan';

/** Taskmaster's statuses onto Baton's; claims are not imported, so in-progress is noted, not claimed. */
const statuses: Record<string, Pick<ForeignItem, 'status' | 'statusNote'>> = {
	pending: { status: 'ready' },
	'in-progress': {
		status: 'ready',
		statusNote: 'Was in progress in Taskmaster when imported (claims are not imported).',
	},
	review: { status: 'review' },
	done: { status: 'done' },
	deferred: { status: 'blocked', statusNote: 'Deferred in Taskmaster when imported.' },
	blocked: { status: 'blocked', statusNote: 'Blocked in Taskmaster when imported.' },
	cancelled: { status: 'done', statusNote: 'Cancelled in Taskmaster (imported as done so nothing waits on it).' },
};

/** high / medium / low (default medium) onto Baton's scale around 0; critical is one above high. */
export function taskmasterPriority(p: unknown): number | undefined {
	switch (p ?? 'medium') {
		case 'critical':
			return 2;
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

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function fail(where: string, why: string): never {
	throw new BatonError('invalid_input', `${where}: ${why}; nothing was imported.`);
}

/**
 * The tasks of `tag` (default: "master", else the only tag) from the text of `file`. The tag is
 * named in skips when the file holds others, which are not imported.
 */
export function parseTaskmaster(content: string, file: string, tag?: string): ForeignBacklog {
	let doc: unknown;
	try {
		doc = JSON.parse(content);
	} catch (e) {
		return fail(file, `not JSON (${(e as Error).message})`);
	}
	if (!isObject(doc)) {
		return fail(file, 'not a JSON object');
	}
	const skips: ImportSkip[] = [];
	let tasks: unknown;
	let chosen = '';
	if (Array.isArray(doc.tasks)) {
		tasks = doc.tasks;
	} else {
		const tags = Object.keys(doc).filter(k => isObject(doc[k]) && Array.isArray(doc[k].tasks));
		chosen = tag ?? (tags.includes('master') ? 'master' : tags.length === 1 ? (tags[0] ?? '') : '');
		if (!tags.includes(chosen)) {
			return fail(
				file,
				tags.length === 0
					? 'no "tasks" list (neither the tagged nor the legacy format)'
					: `no tag "${chosen || '(none chosen)'}"; the file has ${tags.join(', ')} (choose one with --tag)`,
			);
		}
		tasks = (doc[chosen] as Json).tasks;
		for (const other of tags.filter(t => t !== chosen)) {
			skips.push({ ref: other, where: file, reason: `tag "${other}" is not imported (only "${chosen}"; use --tag)` });
		}
	}
	const items: ForeignItem[] = [];
	const list = tasks as unknown[];
	const where = (i: number, sub?: number): string =>
		`${file}${chosen === '' ? '' : ` tag ${chosen}`} task #${i + 1}${sub === undefined ? '' : ` subtask #${sub + 1}`}`;
	list.forEach((task, i) => {
		if (!isObject(task)) {
			return fail(where(i), 'not an object');
		}
		const ref = idOf(task.id, where(i));
		items.push(
			item(
				task,
				ref,
				where(i),
				deps(task.dependencies, where(i), () => undefined),
			),
		);
		const subtasks = task.subtasks ?? [];
		if (!Array.isArray(subtasks)) {
			return fail(where(i), '"subtasks" is not a list');
		}
		const siblings = new Set(subtasks.map(s => (isObject(s) ? String(s.id) : '')));
		subtasks.forEach((sub, j) => {
			if (!isObject(sub)) {
				return fail(where(i, j), 'not an object');
			}
			const subRef = `${ref}.${idOf(sub.id, where(i, j))}`;
			// A bare number in a sub-task's dependencies is a sibling when one has that id, else a task.
			const dependsOn = deps(sub.dependencies, where(i, j), n => (siblings.has(n) ? `${ref}.${n}` : undefined));
			items.push({ ...item(sub, subRef, where(i, j), dependsOn), parent: ref });
		});
	});
	return { source: 'taskmaster', items, skips };
}

function idOf(v: unknown, where: string): string {
	if ((typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '')) {
		return String(v).trim();
	}
	return fail(where, 'the task has no id');
}

function deps(v: unknown, where: string, sibling: (n: string) => string | undefined): string[] {
	if (v === undefined || v === null) {
		return [];
	}
	if (!Array.isArray(v)) {
		return fail(where, '"dependencies" is not a list');
	}
	return v.map(d => {
		if (typeof d !== 'number' && typeof d !== 'string') {
			return fail(where, `dependency ${JSON.stringify(d)} is neither a number nor a string`);
		}
		const s = String(d).trim();
		return sibling(s) ?? s;
	});
}

function item(t: Json, ref: string, where: string, dependsOn: string[]): ForeignItem {
	if (typeof t.title !== 'string' || t.title.trim() === '') {
		return fail(where, `task ${ref} has no title`);
	}
	const rawStatus = t.status ?? 'pending';
	const status = typeof rawStatus === 'string' ? statuses[rawStatus] : undefined;
	if (status === undefined) {
		return fail(
			where,
			`task ${ref} has status ${JSON.stringify(rawStatus)}; known are ${Object.keys(statuses).join(', ')}`,
		);
	}
	const priority = taskmasterPriority(t.priority);
	if (priority === undefined) {
		return fail(where, `task ${ref} has priority ${JSON.stringify(t.priority)}; known are critical, high, medium, low`);
	}
	const body = [
		text(t.description),
		...section('Details', text(t.details)),
		...section('Test strategy', text(t.testStrategy)),
	].join('\n');
	return {
		ref,
		where,
		title: t.title,
		body,
		...status,
		priority,
		dependsOn,
		acceptance: [],
		labels: [],
		...(typeof t.createdAt === 'string' ? { createdAt: t.createdAt } : {}),
		...(typeof t.updatedAt === 'string' ? { updatedAt: t.updatedAt } : {}),
	};
}

function section(heading: string, body: string): string[] {
	return body.trim() === '' ? [] : ['', `## ${heading}`, body.trim()];
}
