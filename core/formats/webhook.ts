/**
 * Outgoing webhooks, the parts with no I/O (docs/architecture.md, "Outgoing webhooks"): the request a
 * hook sends for one event (body, headers, HMAC-SHA256 signature), the receiver's check of that
 * signature, and which of a page of events a hook delivers, passes over or reports as skipped.
 * Node only (node:crypto). Sends nothing, reads no clock (callers pass the time), touches no store.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

import type { BacklogEvent, EventType } from '../protocol';

/** Header names: a contract with every receiver. */
export const webhookHeaders = {
	signature: 'x-baton-signature',
	timestamp: 'x-baton-timestamp',
	delivery: 'x-baton-delivery',
	event: 'x-baton-event',
} as const;

/**
 * The `X-Baton-Delivery` id, `<hook>-<instance>-<seq>`: the same on every retry of one event to one
 * hook, so receivers de-duplicate; the hook's instance (new in a restored copy) keeps a copy's events
 * from sharing ids with the original's.
 */
export function deliveryId(hookId: string, instance: string, seq: number): string {
	return `${hookId}-${instance}-${seq}`;
}

/** `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<raw body>` under the hook's secret. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
	return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What the secret looks like in lists: a fingerprint, never the secret. */
export function secretFingerprint(secret: string): string {
	return `sha256:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}

export interface WebhookRequest {
	body: string;
	headers: Record<string, string>;
}

/** A signed POST: the body as JSON, the delivery id, event type and time in headers, the signature over both. */
function signedRequest(
	secret: string,
	nowSeconds: number,
	userAgent: string,
	id: string,
	eventType: string,
	payload: Record<string, unknown>,
): WebhookRequest {
	const body = JSON.stringify(payload);
	return {
		body,
		headers: {
			'content-type': 'application/json',
			'user-agent': userAgent,
			[webhookHeaders.delivery]: id,
			[webhookHeaders.event]: eventType,
			[webhookHeaders.timestamp]: String(nowSeconds),
			[webhookHeaders.signature]: signWebhook(secret, nowSeconds, body),
		},
	};
}

/** The POST for `event` to hook `hookId`, signed at `nowSeconds` (a retry is signed again, with its own time). */
export function webhookRequest(
	hook: { id: string; instance: string; secret: string },
	event: BacklogEvent,
	nowSeconds: number,
	userAgent: string,
): WebhookRequest {
	const hookId = hook.id;
	const secret = hook.secret;
	const id = deliveryId(hookId, hook.instance, event.seq);
	return signedRequest(secret, nowSeconds, userAgent, id, event.type, { hook: hookId, delivery: id, event });
}

/** The signed test POST of `baton hooks add` / `hooks test`: `X-Baton-Event: ping`, no event in the body. */
export function pingRequest(secret: string, nowSeconds: number, userAgent: string): WebhookRequest {
	const id = `ping-${nowSeconds}`;
	return signedRequest(secret, nowSeconds, userAgent, id, 'ping', { hook: null, delivery: id, ping: true });
}

/**
 * The receiver's check (what docs/guide.md shows): the signature matches the raw body and timestamp,
 * compared in constant time, and the timestamp is within `toleranceSeconds` of now (replay protection).
 */
export function verifyWebhook(
	secret: string,
	body: string,
	timestamp: string | undefined,
	signature: string | undefined,
	nowSeconds: number,
	toleranceSeconds = 300,
): boolean {
	const ts = Number(timestamp);
	if (!Number.isInteger(ts) || signature === undefined || Math.abs(nowSeconds - ts) > toleranceSeconds) {
		return false;
	}
	const want = Buffer.from(signWebhook(secret, ts, body));
	const got = Buffer.from(signature);
	return want.length === got.length && timingSafeEqual(want, got);
}

/** What a hook does with the events after its cursor, in seq order. */
export type HookStep =
	| { kind: 'deliver'; event: BacklogEvent }
	/** Not wanted by the hook's filter (or a seq that was never committed): the cursor moves past it. */
	| { kind: 'pass'; seq: number }
	/** Seqs `from`–`to` may have held progress events the log's compaction deleted before delivery. */
	| { kind: 'skip'; from: number; to: number };

/**
 * The steps for one page of the log read after `cursor`. `end`, when the page was the log's last,
 * is the highest seq known committed (the hub's event pump: later holes may still commit). A hole
 * at or below the compaction `horizon` is reported as a skip when the hook wants progress events
 * (`heartbeat`, the only kind compaction deletes); any other hole is a rolled-back seq and passed.
 */
export function planHookSteps(
	events: readonly BacklogEvent[],
	cursor: number,
	horizon: number,
	wanted: readonly EventType[],
	end?: number,
): HookStep[] {
	const wants = (type: EventType): boolean => wanted.length === 0 || wanted.includes(type);
	const reportsCompaction = wants('heartbeat');
	const steps: HookStep[] = [];
	let at = cursor;
	const hole = (upTo: number): void => {
		const compacted = Math.min(upTo, horizon);
		if (reportsCompaction && compacted > at) {
			steps.push({ kind: 'skip', from: at + 1, to: compacted });
			at = compacted;
		}
		if (upTo > at) {
			steps.push({ kind: 'pass', seq: upTo });
			at = upTo;
		}
	};
	for (const event of events) {
		if (event.seq <= at) {
			continue;
		}
		hole(event.seq - 1);
		steps.push(wants(event.type) ? { kind: 'deliver', event } : { kind: 'pass', seq: event.seq });
		at = event.seq;
	}
	if (end !== undefined) {
		hole(end);
	}
	return steps;
}
