/** Typed test builder: a full wire Card with neutral defaults; a test sets only the fields it is about. */
import type { Card } from '../../core/protocol';

export function makeCard(fields: Partial<Card> & { id: string }): Card {
	const at = fields.createdAt ?? '2026-01-01T00:00:00.000Z';
	return {
		title: `Card ${fields.id}`,
		body: '',
		phase: null,
		priority: 0,
		status: 'ready',
		requires: [],
		dependsOn: [],
		unmetDeps: 0,
		claimOwner: null,
		claimedAt: null,
		leaseExpiresAt: null,
		claimEpoch: 0,
		attempts: 0,
		maxAttempts: 3,
		deferUntil: null,
		progress: null,
		progressNote: null,
		progressAt: null,
		result: null,
		blockedReason: null,
		idempotencyKey: null,
		acceptance: [],
		version: 1,
		createdAt: at,
		updatedAt: at,
		...fields,
	};
}
