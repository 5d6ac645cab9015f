-- 006: every stored plan document has the whole "figures" object and the answer
-- keys (docs/plan-format.md, "figures" and "The answer's keys"), as tesseld
-- writes them since the plan result is defined once (common/plan_fields.h).
-- Plans stored before had "figures" only on registered clusters, with its line
-- alone: each source is read back from that line (tsl_profile_describe's words,
-- planner/profile.c); a plan without one was priced on the built-in figures.
-- Rows whose text is not JSON are left as they are (they fail when read, as
-- before).
UPDATE plans
SET result_json = json_set(result_json, '$.figures.line',
    'figures: built-in (datasheet peak x assumed efficiency, built-in bandwidths and overlap)')
WHERE json_valid(result_json) AND json_type(result_json, '$.figures.line') IS NOT 'text';

UPDATE plans
SET result_json = json_set(result_json,
    '$.figures', json_object(
        'line', json_extract(result_json, '$.figures.line'),
        'compute', CASE
            WHEN instr(json_extract(result_json, '$.figures.line'), 'compute measured') THEN 'measured'
            WHEN instr(json_extract(result_json, '$.figures.line'), 'compute SIMULATED') THEN 'simulated'
            ELSE 'built-in' END,
        'host_device', CASE
            WHEN instr(json_extract(result_json, '$.figures.line'), 'host<->device measured') THEN 'measured'
            WHEN instr(json_extract(result_json, '$.figures.line'), 'host<->device simulated') THEN 'simulated'
            ELSE 'built-in' END,
        'intra_node', CASE
            WHEN instr(json_extract(result_json, '$.figures.line'), 'intra-node measured') THEN 'measured'
            WHEN instr(json_extract(result_json, '$.figures.line'), 'intra-node simulated') THEN 'simulated'
            ELSE 'built-in' END,
        'overlap', CASE
            WHEN instr(json_extract(result_json, '$.figures.line'), 'overlap measured') THEN 'measured'
            WHEN instr(json_extract(result_json, '$.figures.line'), 'overlap simulated') THEN 'simulated'
            ELSE 'built-in' END,
        'memory', 'built-in',
        'inter_node', 'built-in',
        'profile', CASE
            WHEN instr(json_extract(result_json, '$.figures.line'), 'figures: compute ') THEN 'registered'
            ELSE '' END,
        'hardware', json('null'),
        'galvatron', json('null'),
        'workers_left_out', json('[]')),
    '$.cached', json('false'),
    '$.stale', json('false'),
    '$.created_unix', created_unix)
WHERE json_valid(result_json) AND json_type(result_json, '$.figures.compute') IS NULL;
