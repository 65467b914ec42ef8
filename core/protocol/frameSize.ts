/**
 * The one size rule every face shares: a request frame larger than the hub's limit (limits.maxPayload)
 * is refused by the client before it is sent, with its size, the limit and how to split it. Sent, the
 * hub's websocket would drop the connection instead of answering, and a reconnecting client would
 * re-send it again and again. Platform-free (TextEncoder only); no I/O.
 */
import { BatonError } from '../errors';
import { limits } from '.';

const encoder = new TextEncoder();

/** UTF-8 bytes of `frame`; skips encoding when even 3 bytes per UTF-16 unit would fit. */
export function frameBytes(frame: string, limit: number = limits.maxPayload): number {
	return frame.length * 3 <= limit ? frame.length : encoder.encode(frame).length;
}

const mb = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** Throws `too_large` when a request frame would not fit the hub's limit. */
export function checkFrameSize(
	method: string,
	params: unknown,
	frame: string,
	limit: number = limits.maxPayload,
): void {
	const bytes = frameBytes(frame, limit);
	if (bytes <= limit) {
		return;
	}
	throw new BatonError(
		'too_large',
		`This ${method} request is ${mb(bytes)} encoded, over the ${mb(limit)} a Baton message may be. ${splitHint(params, bytes, limit)}`,
		{ bytes, limit },
	);
}

/** How to split: for a list of cards, about how many fit in one request. */
function splitHint(params: unknown, bytes: number, limit: number): string {
	const cards = typeof params === 'object' && params !== null && 'cards' in params ? params.cards : undefined;
	if (Array.isArray(cards) && cards.length > 1) {
		const fit = Math.max(1, Math.floor((cards.length * limit * 0.9) / bytes));
		return `Send the ${cards.length} cards in several requests of about ${fit} cards each.`;
	}
	return 'Send less at once: shorten the text, or split the request.';
}

/** The too_large answer the hub sends instead of an answer larger than limits.maxResponse. */
export function tooLargeAnswer(method: string, bytes: number, limit: number = limits.maxResponse): BatonError {
	return new BatonError(
		'too_large',
		`The answer to ${method} would be ${mb(bytes)}, over the ${mb(limit)} a Baton answer may be. Ask for less at once: fewer cards per request (a smaller limit), or page with the cursor.`,
		{ bytes, limit },
	);
}
