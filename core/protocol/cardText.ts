/**
 * Semantic checks core applies even to typed input: the protocol schemas refuse oversized text at the
 * edge, but import and internal callers can reach core without them, and a refusal must change nothing.
 */
import { BatonError } from '../errors';
import { CardId, Label, limits } from '.';

const encoder = new TextEncoder();

export function checkCardId(id: string): void {
	const parsed = CardId.safeParse(id);
	if (!parsed.success) {
		throw new BatonError(
			'invalid_input',
			`Card id "${id.slice(0, 80)}" is not valid: ids are 1–${limits.idLength} letters, digits or . _ : - and start with a letter or digit.`,
			{ field: 'id' },
		);
	}
}

/**
 * The first string inside `value` (walked through arrays and objects) that holds a NUL character, with
 * its path ("cards.0.body"), or undefined. PostgreSQL stores no NUL in text or jsonb, so a NUL that got
 * past the edge failed deep in the store as `internal`; the hub refuses it up front instead.
 */
export function findNul(value: unknown, path: string[] = []): string | undefined {
	if (typeof value === 'string') {
		return value.includes('\0') ? path.join('.') || 'value' : undefined;
	}
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) {
			const found = findNul(value[i], [...path, String(i)]);
			if (found !== undefined) {
				return found;
			}
		}
		return undefined;
	}
	if (value !== null && typeof value === 'object') {
		for (const [key, item] of Object.entries(value)) {
			const found = findNul(key, [...path, key]) ?? findNul(item, [...path, key]);
			if (found !== undefined) {
				return found;
			}
		}
	}
	return undefined;
}

/** Refuses text with a NUL character (invalid_input naming the field): no store keeps one. */
export function checkNoNul(what: string, field: string, value: unknown): void {
	const at = findNul(value);
	if (at !== undefined) {
		const where = typeof value === 'string' ? field : `${field}.${at}`;
		throw new BatonError(
			'invalid_input',
			`${what}: ${where} contains a NUL character (\\0), which text in Baton cannot hold. Remove it (binary content belongs in a file in the repository, not in a card).`,
			{ field: where },
		);
	}
}

export function checkTitle(cardId: string, title: string): void {
	checkNoNul(`Card ${cardId}`, 'title', title);
	const trimmed = title.trim();
	if (trimmed.length === 0) {
		throw new BatonError('invalid_input', `Card ${cardId}: the title must not be empty.`, { field: 'title' });
	}
	if (title.length > limits.titleLength) {
		throw new BatonError(
			'invalid_input',
			`Card ${cardId}: the title has ${title.length} characters; the limit is ${limits.titleLength}. Shorten it and move detail to the body.`,
			{ field: 'title', length: title.length, limit: limits.titleLength },
		);
	}
}

export function checkBody(cardId: string, body: string): void {
	checkNoNul(`Card ${cardId}`, 'body', body);
	const bytes = encoder.encode(body).length;
	if (bytes > limits.bodyBytes) {
		throw new BatonError(
			'invalid_input',
			`Card ${cardId}: the body is ${bytes} bytes; the limit is ${limits.bodyBytes} (64 KiB). Link to a file instead of pasting it.`,
			{ field: 'body', bytes, limit: limits.bodyBytes },
		);
	}
}

/** Parses an ISO timestamp from the wire, refusing nonsense instead of storing Invalid Date. */
export function parseTimestamp(field: string, value: string): Date {
	const at = new Date(value);
	if (Number.isNaN(at.getTime())) {
		throw new BatonError('invalid_input', `${field} "${value.slice(0, 60)}" is not an ISO-8601 time.`, { field });
	}
	return at;
}

/**
 * A card's labels, checked, without duplicates and sorted: at most `limits.labels`, each
 * 1–`limits.labelLength` letters, digits or - _ : /. The refusal names the card and the label.
 */
export function checkLabels(cardId: string, labels: readonly string[]): string[] {
	const unique = [...new Set(labels)].sort();
	for (const label of unique) {
		if (!Label.safeParse(label).success) {
			throw new BatonError(
				'invalid_input',
				`Card ${cardId}: the label "${label.slice(0, 40)}" is not valid: labels are 1–${limits.labelLength} letters, digits or - _ : / (no spaces).`,
				{ field: 'labels', label },
			);
		}
	}
	if (unique.length > limits.labels) {
		throw new BatonError(
			'invalid_input',
			`Card ${cardId}: ${unique.length} labels; a card has at most ${limits.labels}.`,
			{ field: 'labels', count: unique.length, limit: limits.labels },
		);
	}
	return unique;
}
