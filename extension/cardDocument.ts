/**
 * A card's detail as a read-only markdown document (`baton-card:/<id>.md`), opened in the markdown
 * preview so a reviewer reads the result rendered: status, who completed it, the result,
 * a requested change, acceptance, the body and the messages. The text comes from `card/get` each time
 * the document is shown; agents' markdown is rendered by VS Code's preview, which runs no script. It
 * never changes a card.
 */
import * as vscode from 'vscode';
import type { Result } from '../core/protocol';
import { visibleText } from '../core/visibleText';
import type { HubConnection } from './hubConnection';

export const cardScheme = 'baton-card';

export function cardUri(cardId: string): vscode.Uri {
	return vscode.Uri.from({ scheme: cardScheme, path: `/${cardId}.md` });
}

/** The markdown of a card's detail. */
export function cardMarkdown({ card, messages, dependents }: Result<'card/get'>): string {
	const out: string[] = [`# ${card.id}: ${card.title}`, ''];
	const facts = [`**${card.status === 'review' ? 'In review' : card.status}**`, `priority ${card.priority}`];
	if (card.completedBy) {
		facts.push(`completed by ${card.completedBy}`);
	}
	if (card.claimOwner) {
		facts.push(`held by ${card.claimOwner}`);
	}
	facts.push(`attempt ${card.attempts} of ${card.maxAttempts}`);
	out.push(facts.join(' · '), '');
	if (card.needsInput === true) {
		out.push('> **Needs input:** the agent asked a question (see Messages).', '');
	}
	if (card.result) {
		out.push('## Result', '', card.result, '');
	}
	if (card.handoff) {
		out.push('## Changes requested', '', card.handoff, '');
	}
	if (card.acceptance.length > 0) {
		out.push('## Acceptance', '', ...card.acceptance.map(a => `- ${a}`), '');
	}
	if (dependents.length > 0) {
		out.push(`Waiting on it: ${dependents.map(d => `${d.id} (${d.status})`).join(', ')}`, '');
	}
	if (card.body.trim() !== '') {
		out.push('## Description', '', card.body, '');
	}
	if (messages.length > 0) {
		out.push('## Messages', '');
		for (const m of messages) {
			const mark = m.question ? ' asks' : '';
			const got = m.deliveredAt ? ` · delivered ${m.deliveredAt}` : '';
			out.push(`**${m.from}**${mark} · ${m.at}${got}`, '', m.text, '', '---', '');
		}
	}
	return out.join('\n');
}

export class CardDocuments implements vscode.TextDocumentContentProvider {
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;

	constructor(private readonly hub: HubConnection) {}

	async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const cardId = decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.md$/, ''));
		try {
			// Agent-written text: no control character or bidi override reaches the preview raw.
			return visibleText(cardMarkdown(await this.hub.request('card/get', { cardId })), { multiline: true });
		} catch (e) {
			return `# ${cardId}\n\nCould not load the card: ${e instanceof Error ? e.message : String(e)}\n`;
		}
	}

	/** Shows the card's detail rendered (the markdown preview), refreshed from the hub. */
	async show(cardId: string): Promise<void> {
		const uri = cardUri(cardId);
		this.changed.fire(uri);
		try {
			await vscode.commands.executeCommand('markdown.showPreview', uri);
		} catch {
			// No markdown preview (the built-in extension disabled): the source is readable too.
			await vscode.window.showTextDocument(uri, { preview: true });
		}
	}

	dispose(): void {
		this.changed.dispose();
	}
}
