/**
 * The outgoing webhooks' part of the wire contract (`hooks/*`): a hook's URL and id, a hook as lists
 * show it (never its secret) with its recent deliveries, and the hooks methods' params and results.
 * Part of `core/protocol/index.ts`; platform-free, imports only zod and the parts before it, and
 * delivers nothing (the hub's webhooks.ts does).
 */
import { z } from 'zod';
import { EventType } from './domain';
import { Seq, Timestamp } from './scalars';

/** A hook's receiver: http(s), no credentials in it (they would show in every list; use the secret). */
export const HookUrl = z
	.string()
	.max(2000)
	.refine(
		u => {
			try {
				const url = new URL(u);
				return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
			} catch {
				return false;
			}
		},
		{ message: 'The hook URL must be an http:// or https:// URL without user:password in it.' },
	);
export const HookId = z.string().regex(/^hk[0-9a-f]{8}$/, 'A hook id looks like hk1a2b3c4d (see baton hooks).');

/** One attempt (or skip) in a hook's recent delivery log; the newest 50 per hook are kept. */
export const HookDelivery = z.object({
	seq: Seq,
	/** The `X-Baton-Delivery` header: `<hook id>-<instance>-<seq>`, the same on every retry of that event. */
	deliveryId: z.string(),
	attempt: z.number().int(),
	at: Timestamp,
	/** skipped: the event was compacted away before it could be delivered (seq is the range's last). */
	outcome: z.enum(['delivered', 'failed', 'skipped']),
	status: z.number().int().nullable(),
	error: z.string().nullable(),
	ms: z.number().int().nullable(),
});
export type HookDelivery = z.infer<typeof HookDelivery>;

/** A webhook as lists show it: never its secret, only a fingerprint of it. */
export const Hook = z.object({
	id: HookId,
	url: z.string(),
	/** Event types delivered; empty = all. */
	events: z.array(EventType),
	/** `sha256:` and the first 12 hex digits of the secret's SHA-256, to tell secrets apart. */
	secretFingerprint: z.string(),
	createdAt: Timestamp,
	createdBy: z.string(),
	/** The highest seq the hook is done with; it resumes after it. */
	cursor: Seq,
	/** Events after the cursor in the log (not all of them may match the hook's filter). */
	behind: z.number().int(),
	delivered: z.number().int(),
	lastDeliveredAt: Timestamp.nullable(),
	/** Failed attempts in a row at the current event; 0 = healthy. */
	failures: z.number().int(),
	failingSince: Timestamp.nullable(),
	lastError: z.string().nullable(),
	nextAttemptAt: Timestamp.nullable(),
	/** Why the hook sends nothing (a restore pauses the hooks it brings back; `hooks/resume`); null = it delivers. */
	paused: z.string().nullable(),
	recent: z.array(HookDelivery),
});
export type Hook = z.infer<typeof Hook>;

export const HooksListParams = z
	.object({ recent: z.number().int().min(0).max(50).optional().describe('Recent deliveries per hook; default 10') })
	.strict();
export const HooksListResult = z.object({ hooks: z.array(Hook) });
export const HooksAddParams = z
	.object({
		url: HookUrl,
		/** The HMAC key; at least 16 characters. Stored in the backlog, never returned. */
		secret: z.string().min(16, 'The hook secret must be at least 16 characters.').max(500),
		events: z.array(EventType).max(64).optional(),
	})
	.strict();
export const HookResult = z.object({ hook: Hook });
export const HooksRemoveParams = z.object({ id: HookId }).strict();
/** `hooks/resume`: a paused hook (a restore pauses the hooks it brings back) delivers again. */
export const HooksResumeParams = HooksRemoveParams;
