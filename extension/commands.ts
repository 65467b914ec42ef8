/**
 * Every command of the extension (issue item 4), with all VS Code ids in one `as const` object
 * (STYLE 2.6). Commands that act on a card take it from the tree item they were invoked on, a card
 * id argument, or a quick pick whose items say what will happen. Each returns the hub's result (the
 * tests run them through `executeCommand`); errors are shown once, with Retry and Show Log.
 */
import * as vscode from 'vscode';
import { isClaimable } from '../core/claimable';
import { BatonError } from '../core/errors';
import { isLeaseExpired } from '../core/lease';
import type { Card, CreateCardInput } from '../core/protocol';
import type { AgentNode } from './agentsTree';
import type { BacklogNode, BacklogTreeProvider } from './backlogTree';
import { cardSummary, compareByPriority } from './cardText';
import type { HubConnection } from './hubConnection';
import type { McpTarget } from './mcpConfig';

export const commandIds = {
	/** {@link claimNextCard} */
	claimNextCard: 'baton.claimNextCard',
	claimCard: 'baton.claimCard',
	completeCard: 'baton.completeCard',
	releaseCard: 'baton.releaseCard',
	reclaimExpired: 'baton.reclaimExpired',
	reclaimCard: 'baton.reclaimCard',
	blockCard: 'baton.blockCard',
	unblockCard: 'baton.unblockCard',
	reopenCard: 'baton.reopenCard',
	createCard: 'baton.createCard',
	linkDependency: 'baton.linkDependency',
	openBoard: 'baton.openBoard',
	openBoardInEditor: 'baton.openBoardInEditor',
	showAgents: 'baton.showAgents',
	configureMcpClaudeCode: 'baton.configureMcpClaudeCode',
	configureMcpCursor: 'baton.configureMcpCursor',
	configureMcpWorkspace: 'baton.configureMcpWorkspace',
	filterBacklog: 'baton.filterBacklog',
	clearFilter: 'baton.clearFilter',
	refresh: 'baton.refresh',
	openCardOnBoard: 'baton.openCardOnBoard',
	copyCardId: 'baton.copyCardId',
	revealCard: 'baton.revealCard',
	reclaimAgentClaims: 'baton.reclaimAgentClaims',
	showLog: 'baton.showLog',
} as const;

/** View ids and context keys, next to the command ids (STYLE 2.6). */
export const viewIds = { backlog: 'baton.backlog', agents: 'baton.agents', board: 'baton.board' } as const;
export const contextKeys = { hubConnected: 'baton.hubConnected', backlogFiltered: 'baton.backlogFiltered' } as const;

/** Options a caller (a test, a keybinding) may pass instead of answering prompts. */
export interface CardCommandOptions {
	reason?: string;
	result?: string;
	/** Act on a card another agent holds without asking (the human override, DESIGN §3). */
	force?: boolean;
	/** false: skip the confirmation dialog. */
	confirm?: boolean;
}

export interface CommandContext {
	hub: HubConnection;
	backlog: BacklogTreeProvider;
	backlogView: vscode.TreeView<BacklogNode>;
	log: vscode.LogOutputChannel;
	openBoard(cardId?: string): Promise<void>;
	openBoardInEditor(cardId?: string): Promise<void>;
	configureMcp(target: McpTarget, confirm: boolean): Promise<string | undefined>;
}

/** A card id from whatever a command was invoked with: id, tree node, agent node, {cardId}. */
export function cardIdOf(arg: unknown): string | undefined {
	if (typeof arg === 'string' && arg !== '') {
		return arg;
	}
	if (typeof arg !== 'object' || arg === null) {
		return undefined;
	}
	// Tree nodes arrive as plain objects (BacklogNode / AgentNode); check their shape, not their type.
	const o = arg as { kind?: unknown; card?: { id?: unknown }; view?: { cards?: { id?: unknown }[] }; cardId?: unknown };
	const id = o.kind === 'card' ? o.card?.id : o.kind === 'agent' ? o.view?.cards?.[0]?.id : o.cardId;
	return typeof id === 'string' ? id : undefined;
}

function optionsOf(arg: unknown): CardCommandOptions {
	return typeof arg === 'object' && arg !== null ? arg : {};
}

/** The protocol's schemas, loaded when a prompt needs them (not at activation: see hubConnection.ts). */
const schemas = () => import('../core/protocol');

interface Schema {
	safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } };
}

function validator(schema: Schema) {
	return (value: string): string | undefined => {
		const r = schema.safeParse(value);
		return r.success ? undefined : (r.error?.issues[0]?.message ?? 'invalid value');
	};
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
	const { hub, log } = ctx;
	const ttl = () => hub.settings.claimTtlSeconds;
	/** The card's one-line summary, with its holder's health as this window sees it. */
	const summary = (card: Card, now: number) =>
		cardSummary(card, now, hub.thresholds, hub.healthOf(card.claimOwner, now));
	const known = (id: string): Card => {
		const card = hub.cards.get(id);
		if (!card) {
			throw new BatonError('not_found', `Card ${id} is not in this backlog (${hub.dataDir}).`);
		}
		return card;
	};

	/** Quick pick of cards; each item's detail says what choosing it will do. */
	const pickCard = async (
		title: string,
		cards: Card[],
		effect: (card: Card) => string,
		empty: string,
	): Promise<Card | undefined> => {
		if (cards.length === 0) {
			void vscode.window.showInformationMessage(empty);
			return undefined;
		}
		const now = Date.now();
		const picked = await vscode.window.showQuickPick(
			cards.map(card => ({
				label: card.title,
				description: summary(card, now),
				detail: effect(card),
				card,
			})),
			{ title, matchOnDescription: true, matchOnDetail: false, placeHolder: 'Type to filter by id, title or owner' },
		);
		return picked?.card;
	};

	/** The card a command acts on: its argument, else a pick among `candidates`. */
	const resolveCard = async (
		arg: unknown,
		title: string,
		candidates: () => Card[],
		effect: (card: Card) => string,
		empty: string,
	): Promise<Card | undefined> => {
		await hub.whenAttached();
		const id = cardIdOf(arg);
		if (id !== undefined) {
			return known(id);
		}
		return pickCard(title, candidates(), effect, empty);
	};

	const all = (pred: (c: Card) => boolean) => [...hub.cards.values()].filter(pred).sort(compareByPriority);
	const holder = (card: Card) => (card.claimOwner === hub.me ? 'you' : (card.claimOwner ?? 'nobody'));

	/** Asks before overriding another agent's lease; `force` answers it in advance. */
	const confirmOverride = async (card: Card, verb: string, opts: CardCommandOptions): Promise<boolean | undefined> => {
		if (card.status !== 'claimed' || card.claimOwner === hub.me) {
			return false;
		}
		if (opts.force === true || opts.confirm === false) {
			return true;
		}
		const choice = await vscode.window.showWarningMessage(
			`${card.id} is held by ${card.claimOwner ?? 'another agent'}. ${verb} it anyway?`,
			{ modal: true, detail: 'Their lease is fenced: further heartbeats and completions from them are refused.' },
			`${verb} Anyway`,
		);
		return choice === undefined ? undefined : true;
	};

	const ask = async (
		prompt: string,
		opts: { value?: string; required: boolean; schema: (p: Awaited<ReturnType<typeof schemas>>) => Schema },
	) => {
		const schema = opts.schema(await schemas());
		const value = await vscode.window.showInputBox({
			prompt,
			value: opts.value ?? '',
			ignoreFocusOut: true,
			validateInput: v => (v === '' && !opts.required ? undefined : validator(schema)(v)),
		});
		return value;
	};

	const notify = (message: string, cardId?: string) => {
		log.info(message);
		if (cardId === undefined) {
			void vscode.window.showInformationMessage(message);
			return;
		}
		void vscode.window.showInformationMessage(message, 'Open on Board').then(choice => {
			if (choice !== undefined) {
				void ctx.openBoard(cardId);
			}
		});
	};

	/** Runs a command body; a failure is shown once (Retry / Show Log) and logged, never thrown. */
	const register = (id: string, body: (...args: unknown[]) => Promise<unknown>): vscode.Disposable =>
		vscode.commands.registerCommand(id, async (...args: unknown[]) => {
			try {
				return await body(...args);
			} catch (e) {
				const message = e instanceof Error ? e.message : String(e);
				log.error(`${id} failed: ${BatonError.is(e) ? `${e.code}: ` : ''}${message}`);
				if (!BatonError.is(e) && e instanceof Error && e.stack) {
					log.error(e.stack);
				}
				void vscode.window.showErrorMessage(message, 'Retry', 'Show Log').then(choice => {
					if (choice === 'Retry') {
						void vscode.commands.executeCommand(id, ...args);
					} else if (choice === 'Show Log') {
						log.show();
					}
				});
				return undefined;
			}
		});

	const claimable = (c: Card) => isClaimable(c, Date.now());
	const me = () => hub.me;

	return [
		register(commandIds.claimNextCard, async arg => {
			const opts = optionsOf(arg) as { phase?: string };
			const r = await hub.request('card/claim', {
				ttlSeconds: ttl(),
				...(typeof opts.phase === 'string' ? { phase: opts.phase } : {}),
			});
			if (r.card === null) {
				notify(`Nothing to claim${r.reason ? `: ${r.reason}` : '.'}`);
			} else {
				notify(`Claimed ${r.card.id} — ${r.card.title}. Your lease is renewed while this window is open.`, r.card.id);
			}
			return r;
		}),

		register(commandIds.claimCard, async arg => {
			const card = await resolveCard(
				arg,
				'Claim Card',
				() => all(claimable),
				() => `Claim as ${me()}: lease ${ttl()} s, renewed while this window is open`,
				'No card is claimable right now.',
			);
			if (!card) {
				return undefined;
			}
			const r = await hub.request('card/claim', { cardId: card.id, ttlSeconds: ttl() });
			if (r.card === null) {
				throw new BatonError('invalid_transition', `Could not claim ${card.id}${r.reason ? `: ${r.reason}` : '.'}`);
			}
			notify(`Claimed ${r.card.id} — ${r.card.title}.`, r.card.id);
			return r;
		}),

		register(commandIds.completeCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Complete Card',
				() =>
					all(c => c.status === 'claimed').sort(
						(a, b) => Number(b.claimOwner === me()) - Number(a.claimOwner === me()),
					),
				c => (c.claimOwner === me() ? 'Mark done' : `Mark done, taking it from ${holder(c)} (forced)`),
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			const force = await confirmOverride(card, 'Complete', opts);
			if (force === undefined) {
				return undefined;
			}
			const result =
				opts.result ??
				(opts.confirm === false
					? undefined
					: await ask(`What was done on ${card.id}? (optional)`, { required: false, schema: p => p.ResultText }));
			if (result === undefined && opts.result === undefined && opts.confirm !== false) {
				return undefined;
			}
			const r = await hub.request('card/complete', {
				cardId: card.id,
				...(result === undefined || result === '' ? {} : { result }),
				...(force ? { force: true } : {}),
			});
			notify(
				`Completed ${card.id}.${r.unblocked.length > 0 ? ` Now claimable: ${r.unblocked.join(', ')}.` : ''}`,
				card.id,
			);
			return r;
		}),

		register(commandIds.releaseCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Release Card',
				() =>
					all(c => c.status === 'claimed').sort(
						(a, b) => Number(b.claimOwner === me()) - Number(a.claimOwner === me()),
					),
				c =>
					c.claimOwner === me()
						? 'Give it back to Ready'
						: `Take it from ${holder(c)} and put it back in Ready (forced)`,
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			const force = await confirmOverride(card, 'Release', opts);
			if (force === undefined) {
				return undefined;
			}
			const r = await hub.request('card/release', {
				cardId: card.id,
				...(opts.reason === undefined ? {} : { reason: opts.reason }),
				...(force ? { force: true } : {}),
			});
			notify(`Released ${card.id}; it is ready again.`, card.id);
			return r;
		}),

		register(commandIds.reclaimExpired, async arg => {
			const opts = optionsOf(arg);
			await hub.whenAttached();
			const expired = all(c => isLeaseExpired(c, Date.now()));
			if (opts.confirm !== false) {
				const detail =
					expired.length > 0
						? expired.map(c => `${c.id} (${c.claimOwner ?? '?'})`).join(', ')
						: 'This window sees no expired lease; the hub checks its own clock.';
				const choice = await vscode.window.showWarningMessage(
					`Return every expired claim to Ready?`,
					{ modal: true, detail },
					'Reclaim Expired',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('card/reclaim', {});
			notify(
				r.cards.length === 0
					? 'No expired claims to reclaim.'
					: `Reclaimed ${r.cards.length}: ${r.cards.map(c => c.id).join(', ')}.`,
			);
			return r;
		}),

		register(commandIds.reclaimCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Reclaim Card',
				() => all(c => c.status === 'claimed'),
				c =>
					`Take it from ${holder(c)} and return it to Ready; their lease is fenced (epoch ${c.claimEpoch} → ${c.claimEpoch + 1})`,
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			if (opts.confirm !== false && cardIdOf(arg) !== undefined) {
				const choice = await vscode.window.showWarningMessage(
					`Reclaim ${card.id} from ${holder(card)}?`,
					{ modal: true, detail: 'It returns to Ready and the holder’s lease is fenced.' },
					'Reclaim',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('card/reclaim', {
				cardId: card.id,
				reason: opts.reason ?? `reclaimed by ${me()} from VS Code`,
			});
			notify(`Reclaimed ${card.id}; it is ready again.`, card.id);
			return r;
		}),

		register(commandIds.blockCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Block Card',
				() => all(c => c.status === 'ready' || c.status === 'claimed'),
				c => (c.status === 'claimed' ? `Park it in Blocked, releasing ${holder(c)}'s claim` : 'Park it in Blocked'),
				'No ready or in-progress card to block.',
			);
			if (!card) {
				return undefined;
			}
			const reason =
				opts.reason ?? (await ask(`Why is ${card.id} blocked?`, { required: true, schema: p => p.Reason }));
			if (reason === undefined) {
				return undefined;
			}
			const r = await hub.request('card/block', { cardId: card.id, reason });
			notify(`Blocked ${card.id}.`, card.id);
			return r;
		}),

		register(commandIds.unblockCard, async arg => {
			const card = await resolveCard(
				arg,
				'Unblock Card',
				() => all(c => c.status === 'blocked'),
				c => `Back to Ready${c.blockedReason ? ` (was: ${c.blockedReason})` : ''}`,
				'No card is blocked.',
			);
			if (!card) {
				return undefined;
			}
			const r = await hub.request('card/unblock', { cardId: card.id });
			notify(`Unblocked ${card.id}; it is ready again.`, card.id);
			return r;
		}),

		register(commandIds.reopenCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Reopen Card',
				() => all(c => c.status === 'done'),
				() => 'Back to Ready; cards that depend on it wait again',
				'No card is done.',
			);
			if (!card) {
				return undefined;
			}
			const params = {
				cardId: card.id,
				...(opts.reason === undefined ? {} : { reason: opts.reason }),
				...(opts.force === true ? { force: true } : {}),
			};
			let r;
			try {
				r = await hub.request('card/reopen', params);
			} catch (e) {
				// Dependents already built on it: say which, and reopen only when the user says so.
				if (!BatonError.is(e, 'has_dependents') || opts.confirm === false) {
					throw e;
				}
				const choice = await vscode.window.showWarningMessage(
					`Reopen ${card.id} although work built on it has started?`,
					{
						modal: true,
						detail: `${e.message}\n\nForced, claimed dependents go back to the queue and done ones are flagged.`,
					},
					'Reopen Anyway',
				);
				if (choice !== 'Reopen Anyway') {
					return undefined;
				}
				r = await hub.request('card/reopen', { ...params, force: true });
			}
			notify(`Reopened ${card.id}.`, card.id);
			return r;
		}),

		register(commandIds.createCard, async arg => {
			await hub.whenAttached();
			let input: CreateCardInput;
			if (typeof arg === 'object' && arg !== null && !('kind' in arg)) {
				const parsed = (await schemas()).CreateCardInput.safeParse(arg);
				if (!parsed.success) {
					throw new BatonError(
						'invalid_input',
						`Cannot create that card: ${parsed.error.issues[0]?.message ?? 'invalid input'}.`,
					);
				}
				input = parsed.data;
			} else {
				const title = await ask('Title of the new card', { required: true, schema: p => p.Title });
				if (title === undefined) {
					return undefined;
				}
				const phase = await vscode.window.showInputBox({
					prompt: 'Phase (optional)',
					value: ctx.backlog.filter.phase ?? '',
					ignoreFocusOut: true,
				});
				if (phase === undefined) {
					return undefined;
				}
				const priority = await vscode.window.showInputBox({
					prompt: 'Priority (higher is sooner)',
					value: '0',
					ignoreFocusOut: true,
					validateInput: v => (/^-?\d{1,7}$/.test(v.trim()) ? undefined : 'a whole number, e.g. 0 or 5'),
				});
				if (priority === undefined) {
					return undefined;
				}
				input = { title, priority: Number(priority.trim()), ...(phase.trim() === '' ? {} : { phase: phase.trim() }) };
			}
			const r = await hub.request('card/create', { cards: [input] });
			const card = r.cards[0];
			if (card) {
				notify(`Created ${card.id} — ${card.title}.`, card.id);
			}
			return r;
		}),

		register(commandIds.linkDependency, async (arg, depsArg) => {
			const card = await resolveCard(
				arg,
				'Link Dependency: the card that waits',
				() => all(c => c.status !== 'done'),
				() => 'Choose the cards it must wait for next',
				'There is no open card to link.',
			);
			if (!card) {
				return undefined;
			}
			let deps: string[];
			if (Array.isArray(depsArg) && depsArg.every((d): d is string => typeof d === 'string')) {
				deps = depsArg;
			} else if (typeof depsArg === 'string') {
				deps = [depsArg];
			} else {
				const now = Date.now();
				const picked = await vscode.window.showQuickPick(
					all(c => c.id !== card.id && !card.dependsOn.includes(c.id)).map(c => ({
						label: c.title,
						description: summary(c, now),
						detail: `${card.id} waits until ${c.id} is done${c.status === 'done' ? ' (already done)' : ''}`,
						id: c.id,
					})),
					{ title: `${card.id} depends on…`, canPickMany: true, matchOnDescription: true },
				);
				if (picked === undefined || picked.length === 0) {
					return undefined;
				}
				deps = picked.map(p => p.id);
			}
			const r = await hub.request('card/link', { cardId: card.id, dependsOn: deps });
			notify(`${card.id} now depends on ${deps.join(', ')}.`, card.id);
			return r;
		}),

		register(commandIds.openBoard, async arg => ctx.openBoard(cardIdOf(arg))),
		register(commandIds.openBoardInEditor, async arg => ctx.openBoardInEditor(cardIdOf(arg))),
		register(commandIds.openCardOnBoard, async arg => ctx.openBoard(cardIdOf(arg))),
		register(commandIds.showAgents, async () => vscode.commands.executeCommand(`${viewIds.agents}.focus`)),

		register(commandIds.configureMcpClaudeCode, async arg =>
			ctx.configureMcp('claude-code', optionsOf(arg).confirm !== false),
		),
		register(commandIds.configureMcpCursor, async arg => ctx.configureMcp('cursor', optionsOf(arg).confirm !== false)),
		register(commandIds.configureMcpWorkspace, async arg =>
			ctx.configureMcp('vscode', optionsOf(arg).confirm !== false),
		),

		register(commandIds.filterBacklog, async arg => {
			if (typeof arg === 'object' && arg !== null) {
				ctx.backlog.setFilter(arg);
			} else {
				await hub.whenAttached();
				const phases = [
					...new Set([...hub.cards.values()].map(c => c.phase).filter((p): p is string => p !== null)),
				].sort();
				const current = ctx.backlog.filter;
				const choice = await vscode.window.showQuickPick(
					[
						{ label: '$(search) Filter by text…', action: 'text' as const },
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
					`Card ${id} is not in the Backlog tree (done cards beyond the recent ones are not listed).`,
				);
			}
			await ctx.backlogView.reveal(node, { select: true, focus: true, expand: true });
			return id;
		}),
		register(commandIds.reclaimAgentClaims, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const agentId = typeof arg === 'string' ? arg : (arg as Partial<AgentNode> | undefined)?.view?.agent.id;
			if (agentId === undefined) {
				throw new BatonError('invalid_input', 'Choose an agent in the Agents view to reclaim its claims.');
			}
			if (opts.confirm !== false) {
				const held = [...hub.cards.values()].filter(c => c.status === 'claimed' && c.claimOwner === agentId);
				const choice = await vscode.window.showWarningMessage(
					`Reclaim every card ${agentId} holds?`,
					{
						modal: true,
						detail:
							held.length > 0
								? held.map(c => `${c.id} ${c.title}`).join('\n')
								: 'It holds no card this window knows of.',
					},
					'Reclaim',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('agent/reclaim', {
				agentId,
				reason: opts.reason ?? `reclaimed by ${me()} from VS Code`,
			});
			notify(`Reclaimed ${r.cards.length} card(s) from ${agentId}.`);
			return r;
		}),
		register(commandIds.showLog, async () => {
			log.show();
			return Promise.resolve();
		}),
	];
}
