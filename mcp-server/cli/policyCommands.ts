/**
 * CLI subcommands for the backlog's lifecycle policies: `reopen` (refused while dependents were built
 * on the card, unless --force), `settings` (the backlog-wide retry backoff and stall policy), and the
 * per-card policy flags that create and edit share. Each is one hub request; the hub validates.
 * Must not hold policy logic of its own: core/rules.ts and core/backlog.ts decide.
 */
import type { Settings } from '../../core/protocol';
import { type Command, type CommandContext, type OptionSpec, arg, defined, flag, stringOpt } from './command';
import { UsageError, printJson } from './output';

/** Flags create and edit take for a card's own policies; "default" (edit) returns it to the setting. */
export const policyFields = {
	'backoff-seconds': {
		type: 'string',
		value: 'N',
		description: 'First retry delay after a fail, doubling per attempt (default: the backlog setting)',
	},
	'stall-release-seconds': {
		type: 'string',
		value: 'N',
		description: 'Release the claim after N s without progress; 0 = never (default: the setting)',
	},
} as const satisfies Record<string, OptionSpec>;

/** A per-card policy flag: a whole number, "default" (null: use the backlog setting), or absent. */
export function policyOpt(ctx: CommandContext, name: keyof typeof policyFields): number | null | undefined {
	const v = stringOpt(ctx, name)?.trim();
	if (v === undefined) {
		return undefined;
	}
	if (v === 'default') {
		return null;
	}
	if (!/^\d+$/.test(v)) {
		throw new UsageError(`--${name} must be a whole number of seconds or "default", got "${v}".`);
	}
	return Number.parseInt(v, 10);
}

const reopen: Command = {
	name: 'reopen',
	summary: 'Return a done card to ready',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: {
		reason: { type: 'string', value: 'TEXT', description: 'Why' },
		force: {
			type: 'boolean',
			description: 'Reopen although dependents were built on it: their claims end, done ones are flagged',
		},
	},
	notes:
		'A card whose dependents are claimed or done is refused (exit 1) naming them: they were built on its\n' +
		'result. With --force, claimed dependents go back to the queue and wait for it again (their holders\n' +
		"are told on their next call), and done ones get a 'built on a card that was reopened' entry in their history.",
	async run(ctx) {
		const hub = await ctx.hub();
		const r = await hub.request('card/reopen', {
			cardId: arg(ctx, 0),
			...defined({ reason: stringOpt(ctx, 'reason'), force: flag(ctx, 'force') || undefined }),
		});
		if (ctx.json) {
			printJson(ctx.output, r);
			return 0;
		}
		const lines = [`${r.card.id} is ${r.card.status}: ${r.card.title}`];
		if (r.requeued !== undefined) {
			lines.push(`Claims ended (waiting for ${r.card.id} again): ${r.requeued.join(', ')}`);
		}
		if (r.flagged !== undefined) {
			lines.push(`Flagged as built on a reopened card: ${r.flagged.join(', ')}`);
		}
		ctx.output.out(lines.join('\n'));
		return 0;
	},
};

const settingFlags: Record<keyof Settings, string> = {
	backoffSeconds: 'backoff-seconds',
	backoffMaxSeconds: 'backoff-max-seconds',
	stallReleaseSeconds: 'stall-release-seconds',
};

const settings: Command = {
	name: 'settings',
	summary: "Show or change the backlog's retry backoff and stall policy",
	args: '',
	minArgs: 0,
	maxArgs: 0,
	options: {
		'backoff-seconds': { type: 'string', value: 'N', description: 'First retry delay after a fail (default 30)' },
		'backoff-max-seconds': { type: 'string', value: 'N', description: 'Cap of the doubling delay (default 3600)' },
		'stall-release-seconds': {
			type: 'string',
			value: 'N',
			description: 'Release a claim after N s without progress; 0 = never (default)',
		},
	},
	notes:
		"Settings live in the backlog, so every hub and every backup agree. A card's own --backoff-seconds or\n" +
		'--stall-release-seconds (create, edit) overrides them.',
	async run(ctx) {
		const patch: Partial<Settings> = {};
		for (const [key, name] of Object.entries(settingFlags) as [keyof Settings, string][]) {
			const v = stringOpt(ctx, name)?.trim();
			if (v !== undefined) {
				if (!/^\d+$/.test(v)) {
					throw new UsageError(`--${name} must be a whole number of seconds, got "${v}".`);
				}
				patch[key] = Number.parseInt(v, 10);
			}
		}
		const hub = await ctx.hub();
		const r =
			Object.keys(patch).length === 0
				? await hub.request('settings/get', {})
				: await hub.request('settings/update', patch);
		if (ctx.json) {
			printJson(ctx.output, r);
			return 0;
		}
		ctx.output.out(
			[
				`retry backoff   ${r.backoffSeconds} s, doubling per failed attempt up to ${r.backoffMaxSeconds} s`,
				`stall release   ${r.stallReleaseSeconds === 0 ? 'off' : `after ${r.stallReleaseSeconds} s without progress`}`,
			].join('\n'),
		);
		return 0;
	},
};

export const policyCommands: readonly Command[] = [reopen, settings];
