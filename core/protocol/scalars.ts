/**
 * The wire contract's vocabulary: the limits every face enforces, the scalars (ids,
 * titles, bodies, timestamps, project ids, scopes), the statuses and the error codes. Part of
 * `core/protocol/index.ts`, the first: platform-free, imports only zod, and holds no domain object,
 * method or frame (domain.ts and the parts after it build on these).
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------------
// Limits: one place, so the MCP server, CLI, hub and board refuse the same things.

export const limits = {
	idLength: 64,
	titleLength: 200,
	/** Body limit in UTF-8 bytes (64 KiB). */
	bodyBytes: 64 * 1024,
	phaseLength: 64,
	capabilityLength: 64,
	capabilities: 32,
	acceptanceItems: 50,
	acceptanceLength: 500,
	noteLength: 1000,
	reasonLength: 1000,
	resultLength: 16 * 1024,
	/** A message on a card, in UTF-8 bytes (4 KiB). */
	messageBytes: 4 * 1024,
	dependsOn: 100,
	/** Labels on a card, and the characters of one. */
	labels: 16,
	labelLength: 32,
	createBatch: 1000,
	listLimit: 1000,
	importBatch: 1000,
	idempotencyKeyLength: 200,
	agentIdLength: 128,
	/** Largest request frame the hub accepts (bytes); clients refuse a larger one before sending. */
	maxPayload: 8 * 1024 * 1024,
	/**
	 * Largest answer or event frame the hub sends (bytes), and what clients accept: an answer may carry
	 * more than its request (a create returns the cards it made). A larger answer is replaced by a
	 * too_large error, never sent (the client would drop the connection and re-send the request).
	 */
	maxResponse: 32 * 1024 * 1024,
} as const;

// ---------------------------------------------------------------------------------------------------
// Scalars

const textEncoder = new TextEncoder();
const utf8Length = (s: string): number => textEncoder.encode(s).length;

export const CardId = z
	.string()
	.min(1)
	.max(limits.idLength)
	.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'ids use letters, digits and . _ : - and start with a letter or digit')
	.describe('Card id, e.g. "A4" or "auth-01"');
export type CardId = z.infer<typeof CardId>;

export const AgentId = z
	.string()
	.min(1)
	.max(limits.agentIdLength)
	.regex(/^[^\s\p{Cc}]+$/u, 'agent ids have no spaces or control characters');
export type AgentId = z.infer<typeof AgentId>;

export const Capability = z
	.string()
	.min(1)
	.max(limits.capabilityLength)
	.regex(/^[A-Za-z0-9][A-Za-z0-9:._/+-]*$/, 'capabilities look like "lang:ts" or "repo:web"');

/** A card's label: `ui`, `area:api`, `team/web`. */
export const Label = z
	.string()
	.max(limits.labelLength)
	.regex(/^[A-Za-z0-9_:/-]+$/, 'labels use letters, digits and - _ : /');
export const Labels = z.array(Label).max(limits.labels);

export const Title = z.string().trim().min(1, 'title must not be empty').max(limits.titleLength);
export const Body = z
	.string()
	.refine(s => utf8Length(s) <= limits.bodyBytes, { message: `body is larger than ${limits.bodyBytes} bytes` });
export const Phase = z.string().trim().min(1).max(limits.phaseLength);
export const Priority = z.number().int().min(-1_000_000).max(1_000_000);
export const Acceptance = z.array(z.string().min(1).max(limits.acceptanceLength)).max(limits.acceptanceItems);
export const Capabilities = z.array(Capability).max(limits.capabilities);
export const Epoch = z.number().int().nonnegative();
export const Seq = z.number().int().nonnegative();
/** ISO-8601 timestamp string; the wire never carries Date objects. */
export const Timestamp = z.string();
export const Reason = z.string().min(1).max(limits.reasonLength);
export const Note = z.string().max(limits.noteLength);
export const ResultText = z.string().max(limits.resultLength);
export const MessageText = z
	.string()
	.refine(s => s.trim().length > 0, { message: 'text must not be empty' })
	.refine(s => utf8Length(s) <= limits.messageBytes, {
		message: `text is larger than ${limits.messageBytes} bytes`,
	});
export const Progress = z.number().int().min(0).max(100);
/**
 * A project's id: `github.com/acme/web` from a git remote, or a repository folder's name
 * (core/client/projectId.ts). `*` is not an id: a claim's `project: '*'` means every project.
 */
export const ProjectId = z
	.string()
	.trim()
	.min(1)
	.max(200)
	.regex(/^[^\s\p{Cc}*][^\p{Cc}*]*$/u, 'project ids have no control characters or "*" and do not start with a space');
/**
 * A card's scope: path globs relative to its project's root and `lock:` names. The
 * backlog checks each entry (core/scope.ts); the schema bounds only the sizes.
 */
export const ScopeEntries = z
	.array(z.string().min(1).max(256))
	.max(64, 'a scope lists at most 64 entries; use broader globs ("src/auth/**" for a folder)');
/** Retry backoff seconds (the first delay; later ones double up to the backlog's cap). */
export const BackoffSeconds = z.number().int().min(0).max(86_400);
/** Seconds without progress before a claim is released by the stall policy; 0 = never. */
export const StallSeconds = z
	.number()
	.int()
	.min(0)
	.max(7 * 86_400);

/** `review`: completed by its agent, waiting for approval; dependents keep waiting. */
export const CardStatus = z.enum(['ready', 'claimed', 'review', 'blocked', 'done']);
export type CardStatus = z.infer<typeof CardStatus>;
export const cardStatuses = CardStatus.options;
/**
 * The words a card/list status filter takes: each stored status (`ready` there is every ready card,
 * claimable or held back; `readyOnly` narrows to claimable now), and the words of a ready card held
 * back (core/rules/claimGuards.ts): waiting, deferred, paused.
 */
export const ListStatus = z.enum([...CardStatus.options, 'waiting', 'deferred', 'paused']);
export type ListStatus = z.infer<typeof ListStatus>;

/** Who must approve a card's completion before it counts as done: nobody, a human, or a reviewing agent. */
export const ReviewMode = z.enum(['none', 'human', 'agent']);
export type ReviewMode = z.infer<typeof ReviewMode>;

export const ErrorCode = z.enum([
	'not_found',
	'lease_lost',
	'cycle',
	'invalid_transition',
	'invalid_input',
	'conflict',
	'has_dependents',
	'unauthorized',
	'too_large',
	'disk_full',
	'timeout',
	'unavailable',
	'protocol_mismatch',
	'store_refused',
	'store_too_new',
	'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;
