/**
 * The Backlog tree's card tooltip (backlogTree.ts builds it only when a row is hovered): state,
 * priority and phase, the claim and its lease, a question waiting, review, checks, result, hand-off, blocked
 * reason, scope and the files it waits on, dependencies, body excerpt, acceptance, deferral. Words
 * only: the rules (state word, deferred, failed) are core's and alertRules.ts's; card text is escaped,
 * never interpreted as markdown.
 */
import * as vscode from 'vscode';
import { isDeferred, stateWord } from '../core/rules/claimable';
import { formatDuration } from '../core/duration';
import type { Card } from '../core/protocol';
import { checksSummary } from '../core/rules/checks';
import { type ScopeConflict, scopeWaitText } from '../core/scope/conflicts';
import { isFailed } from './alertRules';
import type { GroupKey } from './backlogNodes';
import { leaseText } from './cardText';
import { visibleText } from '../core/visibleText';

/**
 * `group`: the card's row group (groupOf); `wait`: the files a ready card waits on (scopeWait), when it
 * does; `cards` names its dependencies.
 */
export function cardTooltip(
	card: Card,
	group: GroupKey,
	now: number,
	cards: ReadonlyMap<string, Card>,
	wait: ScopeConflict | undefined,
): vscode.MarkdownString {
	const tip = new vscode.MarkdownString(undefined, true);
	tip.appendMarkdown(`**${md(card.id)}** ${md(card.title)}\n\n`);
	// The card's word as list, show and the board say it (core/rules/claimable.ts): waiting, deferred, ready, …
	const status = group === 'failed' ? 'failed (blocked)' : stateWord(card, now);
	tip.appendMarkdown(`$(circle-filled) ${md(status)} · priority ${card.priority}`);
	if (card.phase !== null) {
		tip.appendMarkdown(` · phase ${md(card.phase)}`);
	}
	tip.appendMarkdown('\n\n');
	if (card.status === 'claimed') {
		const lease = leaseText(card, now) ?? '';
		tip.appendMarkdown(`$(person) ${md(card.claimOwner ?? 'unknown')} · ${md(lease)}`);
		if (card.progress !== null) {
			tip.appendMarkdown(` · ${card.progress}%`);
		}
		if (card.progressNote !== null) {
			tip.appendMarkdown(` — ${md(card.progressNote)}`);
		}
		tip.appendMarkdown('\n\n');
	}
	if (card.needsInput === true) {
		tip.appendMarkdown('$(comment-unresolved) **Needs input:** its agent asked a question (Reply to Agent…)\n\n');
	}
	if (card.status === 'review') {
		tip.appendMarkdown(
			`$(eye) In review (${md(card.review ?? 'human')})${card.completedBy ? ` · completed by ${md(card.completedBy)}` : ''}\n\n`,
		);
	}
	if (card.result !== null && card.result.trim() !== '' && (card.status === 'review' || card.status === 'done')) {
		tip.appendMarkdown('**Result**\n\n');
		tip.appendCodeblock(card.result.length > 400 ? `${card.result.slice(0, 400)}…` : card.result, 'markdown');
	}
	if (card.checks !== undefined && card.status !== 'done') {
		const icon = { running: '$(sync)', passed: '$(pass)', failed: '$(error)', timed_out: '$(error)' }[
			card.checks.state
		];
		tip.appendMarkdown(`${icon} ${md(checksSummary(card.checks))}\n\n`);
	}
	const conflicts = card.workspace?.conflicts;
	if (conflicts !== undefined && card.status === 'review') {
		tip.appendMarkdown(
			`$(warning) No longer merges into ${md(card.workspace?.base ?? 'its base')} (${md(conflicts.files.join(', '))}): approving would send it back; request changes to send it back now\n\n`,
		);
	}
	if (card.handoff && card.status !== 'review') {
		const checked = card.checks?.state === 'failed' || card.checks?.state === 'timed_out';
		tip.appendMarkdown(
			`$(comment-discussion) **${checked ? 'Checks failed; the next attempt starts from' : 'Changes requested'}:** ${md(card.handoff)}\n\n`,
		);
	}
	if (card.blockedReason !== null && card.status === 'blocked') {
		const icon = isFailed(card) ? '$(error) Failed: ' : '$(circle-slash) ';
		tip.appendMarkdown(`${icon}${md(card.blockedReason)}\n\n`);
	}
	const scope = card.scope ?? [];
	if (scope.length > 0 || (card.reserved ?? []).length > 0) {
		const list = (entries: readonly string[]) => entries.map(e => `\`${e.replace(/`/g, "'")}\``).join(', ');
		tip.appendMarkdown(`$(files) **Scope${card.project ? ` in ${md(card.project)}` : ''}:** ${list(scope)}`);
		if (card.status === 'claimed' && (card.reserved ?? []).length > 0) {
			tip.appendMarkdown(` · reserved: ${list(card.reserved ?? [])}`);
		}
		tip.appendMarkdown('\n\n');
	} else if (card.project) {
		tip.appendMarkdown(`$(repo) ${md(card.project)}\n\n`);
	}
	if (wait) {
		tip.appendMarkdown(`$(lock) ${md(scopeWaitText(wait))} (${md(wait.theirs)})\n\n`);
	}
	if (card.dependsOn.length > 0) {
		const deps = card.dependsOn.map(id => {
			const dep = cards.get(id);
			return `${md(id)} (${dep ? stateWord(dep, now) : 'unknown'})`;
		});
		tip.appendMarkdown(`**Depends on:** ${deps.join(', ')}\n\n`);
	}
	if (card.body.trim() !== '') {
		const excerpt = card.body.length > 400 ? `${card.body.slice(0, 400)}…` : card.body;
		tip.appendCodeblock(excerpt, 'markdown');
	}
	if (card.acceptance.length > 0) {
		tip.appendMarkdown(`**Acceptance**\n\n${card.acceptance.map(a => `- ${md(a)}`).join('\n')}\n\n`);
	}
	if (isDeferred(card, now) && card.deferUntil !== null) {
		tip.appendMarkdown(`Not claimable for ${formatDuration(Date.parse(card.deferUntil) - now)}.\n\n`);
	}
	return tip;
}

/**
 * Escapes text for a MarkdownString so card text is shown, never interpreted: markdown's characters,
 * and control characters and bidi overrides as visible escapes (core/visibleText.ts).
 */
export function md(text: string): string {
	return visibleText(text, { multiline: true }).replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
}
