/**
 * The one shape of every MCP tool result: success carries structuredContent and the same
 * compact JSON as text; a refusal is `isError: true` with "code: message next step" and no
 * structuredContent; anything unexpected is logged to stderr and reaches the agent as a safe `internal`.
 * Every tool's result passes through `withInbox` last, which adds the agent's waiting messages.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { z } from 'zod';

import { BatonError, describeIssues } from '../../core/errors';
import { createLogger } from '../../core/log';
import type { ErrorCode } from '../../core/protocol';
import type { Inbox } from './inbox';

const log = createLogger('mcp').child('tools');

/** What an agent should do next after each kind of refusal, when the message does not say it already. */
const nextSteps: Record<ErrorCode, string> = {
	not_found: 'Check the id with list or show, then try again.',
	lease_lost: 'Stop working on this card (another agent may own it now) and call claim for new work.',
	cycle: 'Drop the dependency that closes the cycle and try again.',
	invalid_transition: "Call show to see the card's current status before acting on it.",
	invalid_input: 'Fix the named argument and call the tool again.',
	conflict: 'Call show for the current state and retry.',
	has_dependents: 'Unlink the dependent cards first, or leave this card in place.',
	unauthorized: 'Ask the user to restart this MCP server so it reconnects with a fresh token.',
	too_large: 'Send less at once, for example split the plan into smaller create calls.',
	disk_full: 'Stop writing: tell the user the disk holding the Baton backlog is full. Reads still work.',
	timeout: 'Try again in a few seconds; if it keeps happening, tell the user the Baton hub is overloaded.',
	unavailable: 'Try again in a few seconds; if it keeps happening, ask the user to run "baton hub status".',
	protocol_mismatch: 'Ask the user to restart the Baton hub ("baton hub stop") or update Baton.',
	store_refused: 'Tell the user: Baton refused to open its data dir; "baton hub status" explains why.',
	store_too_new: 'Tell the user to upgrade Baton: the backlog was written by a newer version.',
	internal: 'Try again; if it repeats, tell the user Baton hit an internal error.',
};

/**
 * Failures of the connection rather than of the request. Their messages come from this process's
 * client and name data-dir paths and log files, which agents must not see: they get a
 * fixed sentence, and the original goes to stderr for the user.
 */
const connectionMessages: Partial<Record<ErrorCode, string>> = {
	unavailable: 'The Baton hub is not reachable right now.',
	timeout: 'The Baton hub did not answer in time.',
	unauthorized: "The Baton hub refused this MCP server's credentials.",
	protocol_mismatch: 'The running Baton hub is a different version than this MCP server.',
	store_refused: 'Baton refused to open its data dir.',
	store_too_new: 'The backlog was written by a newer Baton.',
	disk_full: 'The disk holding the Baton backlog is full, so Baton refuses writes until the user frees space.',
	internal: 'Baton hit an internal error.',
};

/**
 * The hub's own `unavailable` for PostgreSQL being unreachable (core/store/pgErrors.ts): its sentence
 * names only host:port, never a path or credentials, and tells the agent what is wrong and that it
 * passes, so it reaches the agent as it is, like every other face shows it.
 */
function namesDatabase(error: BatonError): boolean {
	const data = error.data;
	return (
		error.code === 'unavailable' &&
		typeof data === 'object' &&
		data !== null &&
		'database' in data &&
		typeof data.database === 'string'
	);
}

/** JSON with no whitespace: agents pay per token. */
export function compactJson(value: unknown): string {
	return JSON.stringify(value);
}

export function toolSuccess(result: Record<string, unknown>): CallToolResult {
	return { content: [{ type: 'text', text: compactJson(result) }], structuredContent: result };
}

/**
 * "code: message next step". The hub's refusals already end with what to do (two sentences or more);
 * a one-sentence message gets the code's next step appended.
 */
export function toolRefusal(code: ErrorCode, message: string): CallToolResult {
	const trimmed = message.trim();
	const sentence = /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
	const sentences = sentence.split(/(?<=[.!?])\s+(?=[A-Z"])/).length;
	const text = sentences >= 2 ? `${code}: ${sentence}` : `${code}: ${sentence} ${nextSteps[code]}`;
	return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * Maps anything a tool handler threw. A BatonError about the request itself carries the hub's
 * message (already safe: no SQL, paths or stacks); a connection failure or an `internal` error gets a
 * fixed sentence; a non-Baton error is a bug here and never shows its text.
 */
export function toolFailure(error: unknown, tool: string): CallToolResult {
	if (BatonError.is(error)) {
		const fixed = namesDatabase(error) ? undefined : connectionMessages[error.code];
		if (fixed !== undefined) {
			log.warn(`${tool}: ${error.code}: ${error.message}`);
			return toolRefusal(error.code, fixed);
		}
		return toolRefusal(error.code, error.message);
	}
	log.error(`${tool} failed unexpectedly`, error);
	return toolRefusal('internal', connectionMessages.internal ?? 'Baton hit an internal error.');
}

/** The issues as one sentence; an unknown key also lists the accepted ones, so the agent can fix it. */
function describeInputIssues(schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): string {
	const text = describeIssues(issues);
	if (schema instanceof z.ZodObject && issues.some(i => i.code === 'unrecognized_keys')) {
		return `${text} (accepted: ${Object.keys(schema.shape).join(', ')})`;
	}
	return text;
}

/**
 * Wraps a handler so every outcome is a tool result, never a thrown exception. Arguments are
 * validated here with the full protocol schema (the SDK only sees a pass-through one), so every
 * refusal, from a missing field to a too-long title, reads "invalid_input: field: problem. Next step."
 * and nothing reaches the hub.
 */
export function toolHandler<S extends z.ZodType>(
	tool: string,
	schema: S,
	run: (args: z.output<S>, signal: AbortSignal | undefined) => Promise<Record<string, unknown>>,
): (args: unknown, extra?: { signal?: AbortSignal }) => Promise<CallToolResult> {
	return async (args, extra) => {
		const parsed = schema.safeParse(args ?? {});
		if (!parsed.success) {
			return toolRefusal('invalid_input', describeInputIssues(schema, parsed.error.issues));
		}
		try {
			return toolSuccess(await run(parsed.data, extra?.signal));
		} catch (error) {
			return toolFailure(error, tool);
		}
	};
}

export type ToolCallback = (args: unknown, extra?: { signal?: AbortSignal }) => Promise<CallToolResult>;

/** A tool handler whose successful results also carry the session's waiting messages (`inbox`). */
export function withInbox(inbox: Inbox, handler: ToolCallback): ToolCallback {
	return async (args, extra) => inbox.deliver(await handler(args, extra));
}
