/**
 * The protocol's rules applied to the rows of a backup or export before `baton restore`/`import`
 * applies anything: a card row must be a protocol `Card` (an id such as
 * `x'); DROP TABLE cards;--` is refused, as the hub's own answers would refuse it later for the whole
 * backlog), a claimed card must name its owner and lease, and edges and agents must carry valid ids.
 * Pure: rows in, a sentence naming the line and card out; no I/O, no store.
 */
import { AgentId, Card, CardId } from '../protocol';

/** What is wrong with a card the Card schema alone lets through, or undefined. */
export function cardRuleProblem(card: Card): string | undefined {
	if (card.status === 'claimed' && (card.claimOwner === null || card.leaseExpiresAt === null)) {
		return 'status is claimed but it names no claimOwner and leaseExpiresAt';
	}
	return undefined;
}

/** A backup's `cards` row (row_to_json, snake_case) as the protocol `Card` it stands for. */
function cardOfRow(row: Record<string, unknown>): Record<string, unknown> {
	const card: Record<string, unknown> = {};
	for (const [column, value] of Object.entries(row)) {
		if ((column === 'workspace' || column === 'checks') && value === null) {
			continue; // the wire card has none then (baton_card leaves it out)
		}
		const field =
			column === 'lease_ttl_seconds' ? 'leaseSeconds' : column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
		card[field] = value;
	}
	return card;
}

/** The first issue of a failed parse as "path: message". */
function firstIssue(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
	const issue = issues[0];
	return issue === undefined ? 'not valid' : `${issue.path.map(String).join('.') || 'value'}: ${issue.message}`;
}

function quoted(id: unknown): string {
	return typeof id === 'string' ? JSON.stringify(id.slice(0, 80)) : String(id);
}

/**
 * Why one row of `table` breaks the protocol, or undefined. Tables whose rows clients never see as
 * protocol objects (events, settings, request_log, …) are checked by the database when loaded.
 */
export function backupRowProblem(table: string, row: unknown): string | undefined {
	if (typeof row !== 'object' || row === null || Array.isArray(row)) {
		return 'the row is not a JSON object';
	}
	const r = row as Record<string, unknown>;
	switch (table) {
		case 'cards': {
			const parsed = Card.safeParse(cardOfRow(r));
			if (!parsed.success) {
				return `card ${quoted(r.id)} is not a valid card (${firstIssue(parsed.error.issues)})`;
			}
			const problem = cardRuleProblem(parsed.data);
			return problem === undefined ? undefined : `card ${parsed.data.id}: ${problem}`;
		}
		case 'edges': {
			for (const column of ['card_id', 'dep_id']) {
				if (!CardId.safeParse(r[column]).success) {
					return `the dependency's ${column} ${quoted(r[column])} is not a valid card id`;
				}
			}
			return undefined;
		}
		case 'agents':
			return AgentId.safeParse(r.id).success ? undefined : `agent id ${quoted(r.id)} is not a valid agent id`;
		default:
			return undefined;
	}
}
