/**
 * Reads a beads export (`.beads/issues.jsonl`: one issue per line, as steveyegge/beads writes it)
 * into neutral import items (plan.ts). Pure: the caller reads the file. Refuses a broken line, a
 * missing field or an unknown status by naming the line; tombstones (deleted issues) are reported skips.
 */
import { BatonError } from '../../errors';
import type { ForeignBacklog, ForeignItem, ImportSkip } from './plan';

interface BeadsDependency {
	issue_id?: unknown;
	depends_on_id?: unknown;
	type?: unknown;
}

/** Beads priority 0 (critical) … 4 (backlog), default 2, onto Baton's "higher is sooner" around 0. */
export function beadsPriority(p: number): number {
	return 2 - p;
}

const statuses: Record<string, { status: ForeignItem['status']; note?: string }> = {
	open: { status: 'ready' },
	in_progress: { status: 'ready', note: 'Was in progress in beads when imported (claims are not imported).' },
	blocked: { status: 'blocked', note: 'Blocked in beads when imported.' },
	closed: { status: 'done' },
};

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Parses the JSONL text of `file` (its name is used in messages only). */
export function parseBeads(content: string, file: string): ForeignBacklog {
	const items: ForeignItem[] = [];
	const skips: ImportSkip[] = [];
	const lines = content.split('\n');
	lines.forEach((raw, index) => {
		const line = raw.trim();
		if (line === '') {
			return;
		}
		const where = `${file} line ${index + 1}`;
		let issue: Record<string, unknown>;
		try {
			const parsed: unknown = JSON.parse(line);
			if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
				throw new Error('not an object');
			}
			issue = parsed as Record<string, unknown>;
		} catch (e) {
			throw new BatonError(
				'invalid_input',
				`${where}: not a JSON object (${(e as Error).message}); nothing was imported.`,
				{ line: index + 1 },
			);
		}
		const ref = issue.id;
		if (typeof ref !== 'string' || ref.trim() === '') {
			throw new BatonError('invalid_input', `${where}: the issue has no "id"; nothing was imported.`, {
				line: index + 1,
			});
		}
		if (typeof issue.title !== 'string') {
			throw new BatonError('invalid_input', `${where}: issue ${ref} has no "title"; nothing was imported.`, {
				line: index + 1,
			});
		}
		const rawStatus = issue.status ?? 'open';
		if (rawStatus === 'tombstone') {
			skips.push({ ref, where, reason: 'deleted in beads (tombstone)' });
			return;
		}
		const mapped = typeof rawStatus === 'string' ? statuses[rawStatus] : undefined;
		if (mapped === undefined) {
			throw new BatonError(
				'invalid_input',
				`${where}: issue ${ref} has status ${JSON.stringify(rawStatus)}; known are ${Object.keys(statuses).join(', ')} (and tombstone). Nothing was imported.`,
				{ line: index + 1, status: rawStatus },
			);
		}
		const priority = issue.priority ?? 2;
		if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > 4) {
			throw new BatonError(
				'invalid_input',
				`${where}: issue ${ref} has priority ${JSON.stringify(priority)}; beads priorities are 0–4. Nothing was imported.`,
				{ line: index + 1 },
			);
		}
		const dependsOn: string[] = [];
		const related: string[] = [];
		const duplicates: string[] = [];
		let discoveredFrom: string | undefined;
		let parent: string | undefined;
		const deps: unknown = issue.dependencies ?? [];
		if (!Array.isArray(deps)) {
			throw new BatonError('invalid_input', `${where}: "dependencies" of ${ref} is not a list; nothing was imported.`);
		}
		for (const d of deps as BeadsDependency[]) {
			const on = d.depends_on_id;
			if (typeof on !== 'string' || (d.issue_id !== undefined && d.issue_id !== ref)) {
				throw new BatonError('invalid_input', `${where}: a dependency of ${ref} is malformed; nothing was imported.`);
			}
			const type = d.type ?? 'blocks';
			if (type === 'blocks') {
				dependsOn.push(on);
			} else if (type === 'parent-child') {
				parent = on;
			} else if (type === 'related') {
				related.push(on);
			} else if (type === 'duplicates') {
				duplicates.push(on);
			} else if (type === 'discovered-from') {
				discoveredFrom = on;
			} else {
				throw new BatonError(
					'invalid_input',
					`${where}: dependency type ${JSON.stringify(type)} of ${ref} is unknown (blocks, parent-child, related, discovered-from, duplicates); nothing was imported.`,
				);
			}
		}
		const labels = Array.isArray(issue.labels) ? issue.labels.filter((l): l is string => typeof l === 'string') : [];
		const type = text(issue.issue_type);
		const assignee = text(issue.assignee);
		const acceptance = text(issue.acceptance_criteria)
			.split('\n')
			.map(l => l.replace(/^\s*(?:[-*]\s*)?(?:\[[ xX]\]\s*)?/, '').trim())
			.filter(l => l !== '');
		const sections = [
			text(issue.description),
			...section('Design', text(issue.design)),
			...section('Notes', text(issue.notes)),
			...(type === '' ? [] : ['', `Type: ${type}${assignee === '' ? '' : ` · assignee: ${assignee}`}`]),
			...(mapped.status === 'done' && text(issue.close_reason) !== ''
				? ['', `Closed: ${text(issue.close_reason)}`]
				: []),
		];
		const note = mapped.note;
		items.push({
			ref,
			where,
			title: issue.title,
			body: sections.join('\n'),
			status: mapped.status,
			...(note === undefined ? {} : { statusNote: note }),
			priority: beadsPriority(priority),
			dependsOn,
			...(parent === undefined ? {} : { parent }),
			...(related.length > 0 ? { related } : {}),
			...(duplicates.length > 0 ? { duplicates } : {}),
			...(discoveredFrom === undefined ? {} : { discoveredFrom }),
			acceptance,
			labels,
			...(typeof issue.created_at === 'string' ? { createdAt: issue.created_at } : {}),
			...(typeof issue.updated_at === 'string' ? { updatedAt: issue.updated_at } : {}),
		});
	});
	return { source: 'beads', items, skips };
}

function section(heading: string, body: string): string[] {
	return body.trim() === '' ? [] : ['', `## ${heading}`, body.trim()];
}
