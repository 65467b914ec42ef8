/**
 * What the card commands share: the one-line status of a card after a change, and a command on the
 * card ID whose flags are read before a hub is opened. Output only; no requests of its own.
 */
import { stateWord } from '../../core/rules/claimable';
import type { Card } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type Command, type CommandContext, arg, show } from './command';
import type { Flags } from './flags';
import { heldBack, truncate } from './output';

export function statusLine(card: Card, now: number = Date.now()): string {
	const waiting = heldBack(card, now);
	const owner = card.claimOwner === null ? '' : ` by ${card.claimOwner}, epoch ${card.claimEpoch}`;
	const status =
		card.status === 'review'
			? `in review (${card.review ?? 'human'}; work of ${card.completedBy ?? '?'})`
			: stateWord(card, now);
	const input = card.needsInput === true ? ' — needs input' : '';
	return `${card.id} is ${status}${waiting}${owner}${input}: ${truncate(card.title, 60)}`;
}

export function cardChange(ctx: CommandContext, result: { card: Card }): void {
	show(ctx, result, () => statusLine(result.card));
}

/**
 * A command on the card ID with its flags, answered with the card after the change. The flags are
 * read before the hub is opened, so a bad value never starts one.
 */
export function cardChangeCommand<V>(
	name: string,
	summary: string,
	flags: Flags<V>,
	send: (hub: RpcClient, cardId: string, params: V) => Promise<{ card: Card }>,
): Command {
	return {
		name,
		summary,
		args: 'ID',
		minArgs: 1,
		maxArgs: 1,
		options: flags.options,
		async run(ctx) {
			const params = flags.read(ctx.values);
			cardChange(ctx, await send(await ctx.hub(), arg(ctx, 0), params));
			return 0;
		},
	};
}
