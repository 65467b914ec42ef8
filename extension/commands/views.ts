/**
 * Navigation and views: open the board (panel or editor, optionally at a card), focus the Agents view,
 * filter (phase, label, text) and reveal in the Backlog tree and load more of its Done, the All projects /
 * workspace projects switch, copy a card id, reconnect, show the log. Reads the connection's
 * cache and moves the UI; never sends a request that changes the backlog.
 */
import * as vscode from 'vscode';
import { BatonError } from '../../core/errors';
import { commandIds, viewIds } from './ids';
import { type CommandKit, cardIdOf } from './kit';

export function registerViewCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, hub, log, register } = kit;

	return [
		register(commandIds.openBoard, async arg => ctx.openBoard(cardIdOf(arg))),
		register(commandIds.openBoardInEditor, async arg => ctx.openBoardInEditor(cardIdOf(arg))),
		register(commandIds.openCardOnBoard, async arg => ctx.openBoard(cardIdOf(arg))),
		register(commandIds.showAgents, async () => vscode.commands.executeCommand(`${viewIds.agents}.focus`)),
		register(commandIds.filterBacklog, async arg => {
			if (typeof arg === 'object' && arg !== null) {
				ctx.backlog.setFilter(arg);
			} else {
				await hub.whenAttached();
				const phases = [
					...new Set([...hub.cards.values()].map(c => c.phase).filter((p): p is string => p !== null)),
				].sort();
				const labels = [...new Set([...hub.cards.values()].flatMap(c => c.labels ?? []))].sort();
				const current = ctx.backlog.filter;
				const choice = await vscode.window.showQuickPick(
					[
						{ label: '$(search) Filter by text…', action: 'text' as const },
						{
							label: '$(tag) Label…',
							description: labels.length === 0 ? 'none yet' : '',
							action: 'label' as const,
						},
						...phases.map(p => ({ label: `$(tag) ${p}`, description: 'phase', action: 'phase' as const, phase: p })),
						{ label: '$(clear-all) Show everything', action: 'clear' as const },
					],
					{ title: 'Filter the Backlog', placeHolder: ctx.backlog.describeFilter() || 'No filter' },
				);
				if (!choice) {
					return undefined;
				}
				if (choice.action === 'clear') {
					ctx.backlog.setFilter({});
				} else if (choice.action === 'phase' && 'phase' in choice) {
					ctx.backlog.setFilter({ ...current, phase: choice.phase });
				} else if (choice.action === 'label') {
					// With no label on any card the list is empty and its placeholder says so.
					const picked = await vscode.window.showQuickPick(
						labels.map(label => ({ label })),
						{
							title: 'Filter by label',
							placeHolder: labels.length > 0 ? (current.label ?? '') : 'No card has a label yet',
						},
					);
					if (!picked) {
						return undefined;
					}
					ctx.backlog.setFilter({ ...current, label: picked.label });
				} else {
					const text = await vscode.window.showInputBox({
						prompt: 'Show cards whose id, title or body contains',
						value: current.text ?? '',
					});
					if (text === undefined) {
						return undefined;
					}
					ctx.backlog.setFilter({ ...current, text });
				}
			}
			ctx.backlogView.description = ctx.backlog.describeFilter();
			return ctx.backlog.filter;
		}),
		register(commandIds.clearFilter, async () => {
			ctx.backlog.setFilter({});
			ctx.backlogView.description = '';
			return Promise.resolve(ctx.backlog.filter);
		}),
		register(commandIds.refresh, async () => {
			hub.restart();
			return hub.whenAttached().then(() => undefined);
		}),
		register(commandIds.copyCardId, async arg => {
			const id = cardIdOf(arg);
			if (id !== undefined) {
				await vscode.env.clipboard.writeText(id);
			}
			return id;
		}),
		register(commandIds.revealCard, async arg => {
			const id = cardIdOf(arg);
			if (id === undefined) {
				return undefined;
			}
			let node = ctx.backlog.nodeFor(id);
			if (!node && Object.keys(ctx.backlog.filter).length > 0) {
				// The filter hides it: showing the card matters more than keeping the filter.
				ctx.backlog.setFilter({});
				ctx.backlogView.description = '';
				node = ctx.backlog.nodeFor(id);
			}
			if (!node) {
				throw new BatonError(
					'not_found',
					`Card ${id} is not in the Backlog tree (done cards are listed newest first: Load more… under Done lists older ones).`,
				);
			}
			await ctx.backlogView.reveal(node, { select: true, focus: true, expand: true });
			return id;
		}),
		register(commandIds.showAllProjects, async () => {
			await ctx.projects.setShowAll(true);
			ctx.backlogView.description = ctx.backlog.describeFilter();
			return ctx.projects.filter ?? null;
		}),
		register(commandIds.showWorkspaceProjects, async () => {
			await ctx.projects.refresh();
			await ctx.projects.setShowAll(false);
			ctx.backlogView.description = ctx.backlog.describeFilter();
			return ctx.projects.filter ?? null;
		}),
		// The tree's "Load more…" under Done: the next page of done cards, newest first.
		register(commandIds.loadMoreDone, async () => {
			await hub.loadMoreDone();
			return [...hub.cards.values()].filter(c => c.status === 'done').length;
		}),
		register(commandIds.showLog, async () => {
			log.show();
			return Promise.resolve();
		}),
	];
}
