/**
 * drizzle over the store's own connection: a cold path builds its statements from
 * schema.ts and they run through a Queryable (the Db, or the unit of work's open transaction) by
 * drizzle's pg-proxy driver, so the driver, the transaction and the in-flight count stay the store's.
 * Builds and maps only; hot paths stay hand-written SQL (docs/decisions/0045-drizzle.md).
 */
import { drizzle } from 'drizzle-orm/pg-proxy';

import type { Queryable } from './db';

/** drizzle on `q`: cheap to make, so each statement's caller makes its own. */
export const orm = (q: Queryable) =>
	drizzle(
		async (text, params, method) => {
			const rows = await q.query(text, params);
			// 'all' wants each row as its columns in select order; drizzle names every column once.
			return { rows: method === 'all' ? rows.map(r => Object.values(r)) : rows };
		},
		{ casing: 'snake_case' },
	);
