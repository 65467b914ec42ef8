/**
 * The one error class of Baton. Core throws it for every expected refusal; each boundary maps it once
 * (hub -> ErrorBody, rpc -> BatonError again, MCP -> isError result, CLI -> exit 1). Platform-free.
 */
import type { ErrorBody, ErrorCode } from './protocol';

export class BatonError extends Error {
	override readonly name = 'BatonError';

	constructor(
		readonly code: ErrorCode,
		message: string,
		readonly data?: unknown,
	) {
		super(message);
	}

	/** True when `e` is a BatonError (of `code`, if given). Use instead of matching messages. */
	static is(e: unknown, code?: ErrorCode): e is BatonError {
		return e instanceof BatonError && (code === undefined || e.code === code);
	}

	static fromBody(body: ErrorBody): BatonError {
		return new BatonError(body.code, body.message, body.data);
	}

	toBody(): ErrorBody {
		return this.data === undefined
			? { code: this.code, message: this.message }
			: { code: this.code, message: this.message, data: this.data };
	}
}

/** Render zod-like issues as one readable sentence: "title: too long; priority: expected number". */
export function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
	return issues
		.slice(0, 5)
		.map(i => (i.path.length > 0 ? `${i.path.map(String).join('.')}: ${i.message}` : i.message))
		.join('; ');
}
