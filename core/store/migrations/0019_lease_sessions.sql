-- Who may act on a lease, and agents that ended.
--
-- `cards.claim_session`: the session (a random id the client process made once, sent in its hello)
-- whose connection claimed the card. Heartbeat, complete, release and fail from another session are
-- refused, whatever agent id it declares; NULL (a claim without a session: the CLI, VS Code, the
-- board, or a claim from before this migration) leaves the lease to the agent id, as before. Never
-- part of baton_card(): other clients must not learn it.
-- `agents.ended_at`: when the agent's last connection closed. An ended agent that holds nothing is
-- left out of the agents list and the health counts; the row stays (for `agents --all`) until the
-- retention setting prunes it.
ALTER TABLE cards ADD COLUMN claim_session text;
ALTER TABLE agents ADD COLUMN ended_at timestamptz;

-- baton_hand_over gains the session as a twelfth argument (functions.sql): the holder's complete checks
-- it and the next claim stores it. The 11-argument version (0011, reserved cleared since 0018) stays for
-- hubs of the previous version sharing this database.
