-- The CRM's table and a first set of customers (the example's tests load it).
CREATE TABLE customers (
  customer_id    bigint PRIMARY KEY,
  name           text NOT NULL,
  region_code    text NOT NULL,
  lifetime_value double precision NOT NULL,
  updated_at     timestamp NOT NULL
);
INSERT INTO customers VALUES
  (1, 'Ada Lovelace',   'N', 1200.50, '2026-11-01 08:00:00'),
  (2, 'Alan Turing',    'S',  800.00, '2026-11-01 08:05:00'),
  (3, 'Grace Hopper',   'N',  450.25, '2026-11-01 09:00:00'),
  (4, 'Edsger Dijkstra','E',  300.00, '2026-11-01 09:30:00');
