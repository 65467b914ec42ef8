/**
 * The landing queue's words, the same on the board, in VS Code's tree and wherever a face shows a card's
 * place in its base's line: "Landing now", "Waiting to land · 2nd", who approved it, and a line's count
 * ("1 landing · 2 waiting"). Pure, zod-free, no I/O: the queue itself is the store's
 * (core/backlog/landingQueue.ts) and the hub's (mcp-server/hub/landingLine.ts); this only words its entries.
 */
import type { LandingEntry } from '../protocol';

/** 1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, … 21st. */
export function ordinal(n: number): string {
	const tens = n % 100;
	if (tens >= 11 && tens <= 13) {
		return `${n}th`;
	}
	return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

/** "Landing now", or "Waiting to land · 2nd" (its place in its base's line, the landing one 1st). */
export function landingText(entry: Pick<LandingEntry, 'state' | 'place'>): string {
	return entry.state === 'landing' ? 'Landing now' : `Waiting to land · ${ordinal(entry.place)}`;
}

/** "Landing now on main · approved by ana": the detail's and the tooltip's longer line. */
export function landingLine(entry: Pick<LandingEntry, 'state' | 'place' | 'base' | 'actor'>): string {
	return `${entry.state === 'landing' ? `Landing now on ${entry.base}` : `Waiting to land on ${entry.base} · ${ordinal(entry.place)} in line`} · approved by ${entry.actor}`;
}

/** "1 landing · 2 waiting" for the entries given (empty when there are none). */
export function landingCount(entries: readonly Pick<LandingEntry, 'state'>[]): string {
	const landing = entries.filter(e => e.state === 'landing').length;
	const waiting = entries.length - landing;
	return [landing > 0 ? `${landing} landing` : '', waiting > 0 ? `${waiting} waiting` : ''].filter(Boolean).join(' · ');
}

/** The entries by card id (a card is in at most one line). */
export function landingByCard(entries: readonly LandingEntry[]): Map<string, LandingEntry> {
	return new Map(entries.map(e => [e.cardId, e]));
}
