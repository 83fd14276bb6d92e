/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The NIC (arrivals into the Rx ring), its NAPI poll for the engine's
 * net_rx_action(), and the NET_RX and NET_TX handlers.
 */

#include "sim.h"

/*
 * The NIC.
 */
static uint64_t
steady_time(const struct sim *s, uint64_t i)
{
	return s->start + (uint64_t)(((unsigned __int128)i * PS_PER_S +
				      s->c->rate_pps - 1) / s->c->rate_pps);
}

/* Index of the first steady packet arriving after @t. */
static uint64_t
steady_after(const struct sim *s, uint64_t t)
{
	return (uint64_t)((unsigned __int128)(t - s->start) * s->c->rate_pps /
			  PS_PER_S) + 1;
}

static void
nic_add_steady(struct sim *s, uint64_t upto)
{
	struct nic *nic = &s->nic;
	uint64_t last, n;

	if (s->c->rate_pps == 0)
		return;
	last = steady_after(s, upto);
	if (last <= nic->steady_next)
		return;
	n = last - nic->steady_next;
	nic->arrived += n;
	nic->dropped += pktq_push(&nic->ring, steady_time(s, nic->steady_next),
				  nic->dt_ps, n);
	nic->steady_next = last;
}

/* Everything that arrived up to now, in arrival order. */
void
nic_sync(struct sim *s)
{
	struct nic *nic = &s->nic;

	while (s->c->train_pkts.max != 0 && nic->next_train <= s->now) {
		uint64_t n = range_draw(&nic->prng, s->c->train_pkts);

		nic_add_steady(s, nic->next_train);
		nic->arrived += n;
		nic->dropped += pktq_push(&nic->ring, nic->next_train, 0, n);
		nic->next_train += range_draw(&nic->prng, s->c->train_gap_ps);
	}
	nic_add_steady(s, s->now);
}

static uint64_t
nic_next_arrival(const struct sim *s)
{
	uint64_t t = TIME_NEVER;

	if (s->c->rate_pps != 0)
		t = steady_time(s, s->nic.steady_next);
	if (s->c->train_pkts.max != 0)
		t = min_u64(t, s->nic.next_train);
	return t;
}

/* napi_complete_done(): interrupts on again; one fires for what waits. */
void
nic_arm_irq(struct sim *s)
{
	uint64_t first;

	if (s->c->rx_irq_ps == 0)
		return;
	first = s->nic.ring.pkts > 0 ? s->now : nic_next_arrival(s);
	s->nic.irq_armed = true;
	s->nic.irq_at = first == TIME_NEVER ? TIME_NEVER :
		first + s->c->rx_irq_ps;
}

/*
 * The handlers.
 */
static void
tx_flush_full_bursts(struct sim *s)
{
	while (s->txbuf.pkts >= SIRQ_TX_BURST) {
		uint64_t t = pktq_time_of(&s->txbuf, SIRQ_TX_BURST - 1);

		pktq_pop(&s->txbuf, SIRQ_TX_BURST, t, 0, &s->lat_tx, NULL, NULL);
		s->tx_flushed += SIRQ_TX_BURST;
	}
}

/*
 * The driver's NAPI poll of the Rx ring, for the engine's net_rx_action():
 * up to @weight packets; a short poll completes the context, which turns
 * the Rx interrupt on again.
 */
unsigned int
nic_napi_poll(void *ctx, uint16_t idx, uint16_t weight)
{
	struct sim *s = ctx;
	uint64_t n;

	(void)idx;
	nic_sync(s);
	n = min_u64(s->nic.ring.pkts, weight);
	s->now += s->c->poll_cost_ps;
	pktq_pop(&s->nic.ring, n, s->now, s->c->cost_ps, &s->lat_rx,
		 &s->txbuf, &s->tx_dropped);
	s->now += n * s->c->cost_ps;
	s->rx_processed += n;
	tx_flush_full_bursts(s);
	if (n < weight)
		nic_arm_irq(s);
	return (unsigned int)n;
}

void
net_rx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;
	uint64_t t0 = s->now;

	sirq_softnet_rx_action(&s->softnet);
	if (s->txbuf.pkts > 0)
		sirq_raise_irqoff(cpu, SIRQ_NET_TX);
	handler_account(s, SIRQ_NET_RX, t0);
}

/* NET_TX: flush what the last NET_RX runs left in the TX buffer. */
void
net_tx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;
	uint64_t n = s->txbuf.pkts, t0 = s->now;

	(void)cpu;
	s->now += s->c->poll_cost_ps;
	pktq_pop(&s->txbuf, n, s->now, 0, &s->lat_tx, NULL, NULL);
	s->tx_flushed += n;
	handler_account(s, SIRQ_NET_TX, t0);
}

