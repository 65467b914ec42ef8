/**
 * Readable ids for new cards: `<PREFIX>-<n>`, numbered per prefix without gaps, in the
 * create's own transaction (migration 0024's id_counters: one upsert per prefix, whose row lock makes
 * concurrent creates on several hubs wait their turn). The prefix is the project's own (id_prefixes),
 * else derived from its name, else the backlog's (the `idPrefix` setting). Never renames a card.
 */
import { defaultSettings } from '../protocol';
import type { Queryable } from '../store/db';

/** `github.com/acme/web` → `WEB`, `api-svc` → `APISVC`: the last segment's letters, upper case, at most 10; '' when none. */
export function prefixOfProject(project: string): string {
	const last =
		project
			.split('/')
			.filter(s => s !== '')
			.at(-1) ?? '';
	return last
		.replace(/[^A-Za-z]/g, '')
		.toUpperCase()
		.slice(0, 10);
}

/** The backlog's own prefix (cards without a project), or each project's. */
export async function prefixesFor(
	tx: Queryable,
	projects: readonly (string | null)[],
): Promise<Map<string | null, string>> {
	const named = [...new Set(projects.filter((p): p is string => p !== null))];
	const set = new Map(
		(
			await tx.query<{ project: string; prefix: string }>(
				'SELECT project, prefix FROM id_prefixes WHERE project = ANY($1::text[])',
				[named],
			)
		).map(r => [r.project, r.prefix]),
	);
	const [own] = await tx.query<{ value: unknown }>(`SELECT value FROM settings WHERE key = 'idPrefix'`);
	const backlog = typeof own?.value === 'string' ? own.value : defaultSettings.idPrefix;
	const out = new Map<string | null, string>([[null, backlog]]);
	for (const p of named) {
		const derived = prefixOfProject(p);
		out.set(p, set.get(p) ?? (derived === '' ? backlog : derived));
	}
	return out;
}

/**
 * Ids for `projects.length` new cards (each card's project), in order. Numbers a user took by hand
 * (an id `WEB-7` given at create) are skipped, the only way a number is passed over.
 */
export async function readableIds(tx: Queryable, projects: readonly (string | null)[]): Promise<string[]> {
	const prefixes = await prefixesFor(tx, projects);
	const wanted = new Map<string, number>();
	for (const p of projects) {
		const prefix = prefixes.get(p) ?? defaultSettings.idPrefix;
		wanted.set(prefix, (wanted.get(prefix) ?? 0) + 1);
	}
	const free = new Map<string, string[]>();
	for (const [prefix, n] of wanted) {
		const ids: string[] = [];
		while (ids.length < n) {
			const need = n - ids.length;
			const [row] = await tx.query<{ first: number }>(
				`INSERT INTO id_counters (prefix, next) VALUES ($1, $2::int + 1)
				 ON CONFLICT (prefix) DO UPDATE SET next = id_counters.next + $2::int
				 RETURNING next - $2::int AS first`,
				[prefix, need],
			);
			const first = row?.first ?? 1;
			const candidates = Array.from({ length: need }, (_, i) => `${prefix}-${first + i}`);
			const taken = new Set(
				(await tx.query<{ id: string }>('SELECT id FROM cards WHERE id = ANY($1::text[])', [candidates])).map(
					r => r.id,
				),
			);
			ids.push(...candidates.filter(c => !taken.has(c)));
		}
		free.set(prefix, ids);
	}
	return projects.map(p => {
		const list = free.get(prefixes.get(p) ?? defaultSettings.idPrefix) ?? [];
		return list.shift() ?? '';
	});
}

/** Sets the prefix of a project's new cards (null: the backlog's own, kept as the `idPrefix` setting). */
export async function setIdPrefix(tx: Queryable, project: string | null, prefix: string): Promise<void> {
	if (project === null) {
		await tx.query(
			`INSERT INTO settings (key, value) VALUES ('idPrefix', $1::json) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
			[JSON.stringify(prefix)],
		);
		return;
	}
	await tx.query(
		'INSERT INTO id_prefixes (project, prefix) VALUES ($1, $2) ON CONFLICT (project) DO UPDATE SET prefix = excluded.prefix',
		[project, prefix],
	);
}
