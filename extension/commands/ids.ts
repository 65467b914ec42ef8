/**
 * Every VS Code id of the extension in one place: command ids as one `as const` object,
 * view ids and context keys beside them. package.json's contributions use exactly these strings.
 * Ids only: no vscode import, no behaviour, so any module (and the tests) can import them cheaply.
 */

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
	reviewNextCard: 'baton.reviewNextCard',
	approveCard: 'baton.approveCard',
	requestChanges: 'baton.requestChanges',
	messageAgent: 'baton.messageAgent',
	replyToAgent: 'baton.replyToAgent',
	openChanges: 'baton.openChanges',
	showCardDetail: 'baton.showCardDetail',
	showAllProjects: 'baton.showAllProjects',
	showWorkspaceProjects: 'baton.showWorkspaceProjects',
	loadMoreDone: 'baton.loadMoreDone',
	startAgents: 'baton.startAgents',
	stopAgents: 'baton.stopAgents',
	pause: 'baton.pause',
	resume: 'baton.resume',
	assignCard: 'baton.assignCard',
	showSeatOutput: 'baton.showSeatOutput',
} as const;

/** View ids and context keys, next to the command ids. */
export const viewIds = { backlog: 'baton.backlog', agents: 'baton.agents', board: 'baton.board' } as const;
export const contextKeys = { hubConnected: 'baton.hubConnected', backlogFiltered: 'baton.backlogFiltered' } as const;
