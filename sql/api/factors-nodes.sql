-- The driver trees' nodes of the factors with factor_id in [$first, $last], in depth-first order.
-- Parameters: $first VARCHAR, $last VARCHAR.
SELECT n.* FROM factor_nodes AS n
WHERE n.factor_id BETWEEN $first AND $last
ORDER BY n.factor_id, n.ord;
