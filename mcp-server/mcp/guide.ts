/** The short work-loop guide an agent reads as the `baton://guide` resource, prompt and server instructions. */

export const guideUri = 'baton://guide';

export const guideText = `Baton is the team's shared backlog; other agents and humans work from it too.
Loop: claim (waitSeconds up to 60 waits for work) -> do the card -> heartbeat {cardId, progress, note} at milestones -> complete {cardId, result, next: true} (next: true claims your next card in the same call).
If you cannot finish: release {cardId, reason} to hand it back, or fail {cardId, reason} if the work itself failed.
Your lease stays alive while this session is open; lease_lost means another agent took the card over: stop and claim again.
Before resuming a card, show it and read its attempts. Plan work with create {cards: [...]}, dependsOn and parent (an epic's autoClose: true closes it with its last child); link {cardId, duplicates: [id]} marks a duplicate.
Review: a card with review goes to review on complete; a claim's handoff is a reviewer's note: start from it. Reviewers (capability review) claim {review: true}, then review {cardId, approve, note}.
Projects: claim gives you cards of your git repository's project and cards with none; create gives new cards your project. A card's scope lists the paths it touches (globs, lock:name): before editing files outside it, reserve {cardId, paths} and leave refused paths alone. If claim returns workspace, work and commit only in workspace.path.
Messages on your cards arrive as inbox in any tool result: act on them first. To ask a human, comment {cardId, text, question: true}, then heartbeat {cardId, waitSeconds: 60} until the answer is in inbox.`;
