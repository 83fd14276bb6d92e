/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lwIP behind one Ethernet netif, and the echo server on its raw API.
 *
 * Threads: lwIP runs inside libsirq handlers (NET_RX, TIMER, TASKLET), on
 * the dispatcher or on sirqd, never both at once (the execution lock);
 * the main thread touches it at start and at exit. Debian's lwIP is built
 * NO_SYS=0 with LWIP_TCPIP_CORE_LOCKING and we run no tcpip_thread, so
 * every entry point holds LOCK_TCPIP_CORE, as tcpip_thread would.
 *
 * Echo: what a connection receives goes to its backlog; conn_push()
 * writes from the backlog only what can leave at once (inside the send
 * window) and only while the connection's bytes at the NIC are under the
 * TSQ limit, so that lwIP's unsent queue stays empty and the limit holds
 * for every segment it sends later (ACK clocking from tcp_input does not
 * send data we have not written). The receive window is opened
 * (tcp_recved()) only for what was written, so a client that sends
 * faster than we echo is flow-controlled by TCP. Pushes come from
 * receive, from ACKs (sent callback), from TX completion (the tasklet)
 * and, as a safety net, from lwIP's poll timer.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lwip/init.h>
#include <lwip/ip4_addr.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/sys.h>
#include <lwip/tcp.h>
#include <lwip/tcpip.h>
#include <lwip/timeouts.h>
#include <netif/etharp.h>
#include <netif/ethernet.h>

#include "echo_stack.h"

#define ETH_HLEN 14
/* Shortest Ethernet frame without its FCS (IEEE 802.3 minimum of 64). */
#define ETH_ZLEN 60
/*
 * Room before a received frame so that its IP header, after the 14-byte
 * Ethernet header, is 8-byte aligned (lwIP's ETH_PAD_SIZE, which Debian's
 * build leaves at 0). IP reassembly writes a pointer over each queued
 * fragment's IP header; unaligned, LeakSanitizer cannot see it and took
 * every queued fragment but the first for a leak.
 */
#define ETH_PAD 2
#define ETH_TYPE_OFF 12
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IPV4_HLEN_MIN 20
#define IP_PROTO_OFF 9
#define IP_SRC_OFF 12
#define IP_DST_OFF 16
#define IPV4_LOOPBACK_NET 127	/* 127.0.0.0/8, first byte */
#define TCP_HLEN_MIN 20
#define IPPROTO_TCP_NUM 6
/* Ethernet, the longest IPv4 header and the TCP ports. */
#define TX_PEEK_LEN (ETH_HLEN + 60 + 4)

/* lwIP's poll callback every POLL_INTERVAL * 500 ms: the safety net. */
#define POLL_INTERVAL 1
/* One tcp_write() takes a u16 length. */
#define WRITE_MAX 0xffff

#define CONN_HASH_BITS 12
#define CONN_HASH_SIZE (1u << CONN_HASH_BITS)

struct echo_conn {
	struct tcp_pcb *pcb;		/* NULL: slot free */
	struct echo_conn *hash_next;
	uint32_t remote_ip;		/* network order */
	uint16_t remote_port;		/* host order */
	bool peer_closed;		/* FIN received */
	struct pbuf *backlog;		/* received, not written back yet */
	uint16_t backlog_off;		/* consumed bytes of its first pbuf */
	/*
	 * Scheduled by NET_TX when a packet of tsq completes. Initialised
	 * once: a slot is reused only when no packet of its last
	 * connection is in flight and the tasklet is not scheduled.
	 */
	struct sirq_tasklet tasklet;
	struct sirq_tx_tracker tsq;
};

static struct {
	struct echo_stack_conf conf;
	struct netif netif;
	struct tcp_pcb *listener;
	struct echo_conn *conns;
	uint32_t nb_active;
	struct echo_conn *hash[CONN_HASH_SIZE];
	struct echo_stats st;
	bool up;
} stack;

static inline void
count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline uint32_t
conn_hash(uint32_t ip, uint16_t port)
{
	/* Fibonacci hashing of the peer's address and port. */
	return ((ip ^ ((uint32_t)port << 16 | port)) * 0x9e3779b1u) >>
		(32 - CONN_HASH_BITS);
}

static void
hash_add(struct echo_conn *c)
{
	uint32_t h = conn_hash(c->remote_ip, c->remote_port);

	c->hash_next = stack.hash[h];
	stack.hash[h] = c;
}

static void
hash_del(struct echo_conn *c)
{
	struct echo_conn **pp = &stack.hash[conn_hash(c->remote_ip,
						      c->remote_port)];

	for (; *pp != NULL; pp = &(*pp)->hash_next)
		if (*pp == c) {
			*pp = c->hash_next;
			return;
		}
}

static struct echo_conn *
hash_find(uint32_t ip, uint16_t port)
{
	struct echo_conn *c = stack.hash[conn_hash(ip, port)];

	for (; c != NULL; c = c->hash_next)
		if (c->remote_ip == ip && c->remote_port == port)
			return c;
	return NULL;
}

/*
 * The connection an outgoing frame belongs to: IPv4, TCP, from our port.
 * Segments lwIP sends on its own (ACKs, retransmissions, FIN) count
 * against the limit as much as ours do, as in the kernel's TSQ.
 */
static struct sirq_tx_tracker *
frame_tracker(struct pbuf *p)
{
	uint8_t h[TX_PEEK_LEN];
	uint16_t n = pbuf_copy_partial(p, h, sizeof(h), 0);
	unsigned int ihl;
	struct echo_conn *c;
	uint32_t ip;

	if (n < ETH_HLEN + IPV4_HLEN_MIN ||
	    (h[ETH_TYPE_OFF] << 8 | h[ETH_TYPE_OFF + 1]) != ETHERTYPE_IPV4 ||
	    h[ETH_HLEN + IP_PROTO_OFF] != IPPROTO_TCP_NUM)
		return NULL;
	ihl = (h[ETH_HLEN] & 0xf) * 4u;
	if (ihl < IPV4_HLEN_MIN || n < ETH_HLEN + ihl + 4)
		return NULL;
	if ((h[ETH_HLEN + ihl] << 8 | h[ETH_HLEN + ihl + 1]) != stack.conf.port)
		return NULL;
	memcpy(&ip, &h[ETH_HLEN + IP_DST_OFF], sizeof(ip));
	c = hash_find(ip, (uint16_t)(h[ETH_HLEN + ihl + 2] << 8 |
				     h[ETH_HLEN + ihl + 3]));
	return c == NULL ? NULL : &c->tsq;
}

static err_t
netif_linkoutput(struct netif *netif, struct pbuf *p)
{
	LWIP_UNUSED_ARG(netif);
	if (stack.conf.xmit(stack.conf.xmit_arg, p, frame_tracker(p)) != 0) {
		count(&stack.st.tx_errors, 1);
		return ERR_IF;
	}
	count(&stack.st.frames_out, 1);
	return ERR_OK;
}

static err_t
netif_setup(struct netif *netif)
{
	netif->name[0] = 'd';
	netif->name[1] = 'k';
	netif->output = etharp_output;
	netif->linkoutput = netif_linkoutput;
	netif->mtu = stack.conf.mtu;
	netif->hwaddr_len = ETH_HWADDR_LEN;
	memcpy(netif->hwaddr, stack.conf.mac, ETH_HWADDR_LEN);
	netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP |
		NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
	return ERR_OK;
}

/* No more callbacks from @pcb: lwIP's defaults take over (recv frees). */
static void
pcb_detach(struct tcp_pcb *pcb)
{
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_sent(pcb, NULL);
	tcp_err(pcb, NULL);
	tcp_poll(pcb, NULL, 0);
}

/* Forget the connection; its slot is reused once its packets completed. */
static void
conn_release(struct echo_conn *c)
{
	if (c->pcb != NULL)
		pcb_detach(c->pcb);
	hash_del(c);
	if (c->backlog != NULL)
		pbuf_free(c->backlog);
	c->backlog = NULL;
	c->backlog_off = 0;
	c->pcb = NULL;
	c->peer_closed = false;
	__atomic_fetch_sub(&stack.nb_active, 1, __ATOMIC_RELAXED);
}

/* Bytes that can leave now: send window, then the TSQ limit. */
static uint32_t
conn_room(const struct echo_conn *c)
{
	const struct tcp_pcb *pcb = c->pcb;
	uint32_t wnd = LWIP_MIN(pcb->snd_wnd, pcb->cwnd);
	uint32_t outstanding = pcb->snd_lbb - pcb->lastack;
	uint32_t room = wnd > outstanding ? wnd - outstanding : 0;
	uint64_t at_nic = c->tsq.inflight_bytes;

	/* A zero window with nothing outstanding: let lwIP probe it. */
	if (room == 0 && outstanding == 0)
		room = tcp_mss(pcb);
	if (at_nic >= stack.conf.tsq_limit)
		return 0;
	room = LWIP_MIN(room, stack.conf.tsq_limit - (uint32_t)at_nic);
	return LWIP_MIN(room, (uint32_t)tcp_sndbuf(pcb));
}

static void conn_close(struct echo_conn *c);

/* Drop the first pbuf of the backlog, keep the rest of the chain. */
static void
conn_backlog_pop(struct echo_conn *c)
{
	struct pbuf *p = c->backlog;

	c->backlog = p->next;
	if (p->next != NULL)
		pbuf_ref(p->next);
	/* Frees p, then drops the reference we just took on the rest. */
	pbuf_free(p);
	c->backlog_off = 0;
}

/* Write back what the window and the TSQ limit let leave now. */
static void
conn_push(struct echo_conn *c)
{
	uint32_t written = 0;

	while (c->backlog != NULL) {
		struct pbuf *p = c->backlog;
		uint32_t room;
		uint16_t len;
		u8_t flags = TCP_WRITE_FLAG_COPY;

		if (c->backlog_off == p->len) {
			conn_backlog_pop(c);
			continue;
		}
		room = conn_room(c);
		len = (uint16_t)LWIP_MIN(LWIP_MIN(room, WRITE_MAX),
					 (uint32_t)(p->len - c->backlog_off));
		if (len == 0) {
			if (c->tsq.inflight_bytes >= stack.conf.tsq_limit)
				count(&stack.st.tsq_throttled, 1);
			break;
		}
		if (len < p->len - c->backlog_off || p->next != NULL)
			flags |= TCP_WRITE_FLAG_MORE;
		if (tcp_write(c->pcb, (const uint8_t *)p->payload +
			      c->backlog_off, len, flags) != ERR_OK)
			break;	/* ERR_MEM: the sent callback comes back */
		written += len;
		c->backlog_off += len;
		if (c->backlog_off == p->len)
			conn_backlog_pop(c);
	}
	if (written != 0) {
		count(&stack.st.bytes_echoed, written);
		tcp_output(c->pcb);
		/* tcp_recved() takes a u16 too. */
		while (written != 0) {
			uint16_t n = (uint16_t)LWIP_MIN(written, WRITE_MAX);

			tcp_recved(c->pcb, n);
			written -= n;
		}
	}
	if (c->peer_closed && c->backlog == NULL)
		conn_close(c);
}

/*
 * Both directions done: FIN after what is queued. lwIP 2.1 returns ERR_OK
 * from tcp_close() even when it has no memory for the FIN yet (it marks
 * the pcb TF_CLOSEPEND and tcp_tmr() sends it), so the pcb is lwIP's.
 */
static void
conn_close(struct echo_conn *c)
{
	pcb_detach(c->pcb);
	tcp_close(c->pcb);
	c->pcb = NULL;
	count(&stack.st.conns_closed, 1);
	conn_release(c);
}

static err_t
on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct echo_conn *c = arg;

	LWIP_UNUSED_ARG(pcb);
	if (p == NULL) {
		c->peer_closed = true;
		conn_push(c);
		return ERR_OK;
	}
	if (err != ERR_OK) {
		/* Ours to free; any other return than ERR_OK makes lwIP keep it. */
		pbuf_free(p);
		return ERR_OK;
	}
	count(&stack.st.bytes_in, p->tot_len);
	if (c->backlog == NULL)
		c->backlog = p;
	else
		pbuf_cat(c->backlog, p);
	conn_push(c);
	return ERR_OK;
}

static err_t
on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	LWIP_UNUSED_ARG(pcb);
	LWIP_UNUSED_ARG(len);
	conn_push(arg);
	return ERR_OK;
}

static err_t
on_poll(void *arg, struct tcp_pcb *pcb)
{
	struct echo_conn *c = arg;

	LWIP_UNUSED_ARG(pcb);
	if (c != NULL && c->pcb != NULL)
		conn_push(c);
	return ERR_OK;
}

/* RST from the peer, or lwIP gave up: the pcb is gone already. */
static void
on_err(void *arg, err_t err)
{
	struct echo_conn *c = arg;

	LWIP_UNUSED_ARG(err);
	if (c == NULL || c->pcb == NULL)
		return;
	c->pcb = NULL;
	count(&stack.st.conns_reset, 1);
	conn_release(c);
}

/* TX completion of this connection: its next batch (tcp_tsq_handler). */
static void
conn_tasklet(struct sirq_tasklet *t, void *arg)
{
	struct echo_conn *c = arg;

	LWIP_UNUSED_ARG(t);
	LOCK_TCPIP_CORE();
	if (c->pcb != NULL && c->backlog != NULL) {
		count(&stack.st.tsq_tasklet_runs, 1);
		conn_push(c);
	}
	UNLOCK_TCPIP_CORE();
}

static struct echo_conn *
conn_slot(void)
{
	uint32_t i;

	for (i = 0; i < stack.conf.max_conns; i++) {
		struct echo_conn *c = &stack.conns[i];

		if (c->pcb == NULL && c->tsq.inflight_pkts == 0 &&
		    !sirq_tasklet_is_scheduled(&c->tasklet))
			return c;
	}
	return NULL;
}

static err_t
on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct echo_conn *c;

	LWIP_UNUSED_ARG(arg);
	if (err != ERR_OK || pcb == NULL)
		return ERR_VAL;
	c = conn_slot();
	if (c == NULL) {
		count(&stack.st.conns_refused, 1);
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	c->pcb = pcb;
	c->remote_ip = ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip));
	c->remote_port = pcb->remote_port;
	c->peer_closed = false;
	hash_add(c);
	__atomic_fetch_add(&stack.nb_active, 1, __ATOMIC_RELAXED);
	count(&stack.st.conns_accepted, 1);
	/* Echo is request/response: Nagle would wait for the client's ACK. */
	tcp_nagle_disable(pcb);
	tcp_arg(pcb, c);
	tcp_recv(pcb, on_recv);
	tcp_sent(pcb, on_sent);
	tcp_err(pcb, on_err);
	tcp_poll(pcb, on_poll, POLL_INTERVAL);
	return ERR_OK;
}

int
echo_stack_init(const struct echo_stack_conf *conf)
{
	ip4_addr_t ip, mask, gw;
	struct tcp_pcb *pcb;
	uint32_t i;
	int ret = 0;

	if (conf->xmit == NULL || conf->max_conns == 0 ||
	    conf->max_conns > ECHO_MAX_CONNS || conf->tsq_limit == 0 ||
	    conf->mtu == 0)
		return -EINVAL;
	stack.conf = *conf;
	stack.conns = calloc(conf->max_conns, sizeof(*stack.conns));
	if (stack.conns == NULL)
		return -ENOMEM;
	for (i = 0; i < conf->max_conns; i++) {
		struct echo_conn *c = &stack.conns[i];

		sirq_tasklet_init(&c->tasklet, conn_tasklet, c);
		c->tsq.tasklet = &c->tasklet;
	}

	if (sys_mutex_new(&lock_tcpip_core) != ERR_OK) {
		ret = -ENOMEM;
		goto free_conns;
	}
	LOCK_TCPIP_CORE();
	lwip_init();
	ip4_addr_set_u32(&ip, conf->ip);
	ip4_addr_set_u32(&mask, conf->netmask);
	ip4_addr_set_zero(&gw);
	if (netif_add(&stack.netif, &ip, &mask, &gw, NULL, netif_setup,
		      ethernet_input) == NULL) {
		ret = -EINVAL;
		goto out;
	}
	netif_set_default(&stack.netif);
	netif_set_up(&stack.netif);
	netif_set_link_up(&stack.netif);

	pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
	if (pcb == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	if (tcp_bind(pcb, IP4_ADDR_ANY, conf->port) != ERR_OK) {
		tcp_close(pcb);
		ret = -EADDRINUSE;
		goto out;
	}
	stack.listener = tcp_listen(pcb);
	if (stack.listener == NULL) {
		tcp_close(pcb);
		ret = -ENOMEM;
		goto out;
	}
	tcp_accept(stack.listener, on_accept);
	stack.up = true;
out:
	UNLOCK_TCPIP_CORE();
	if (ret == 0)
		return 0;
	/* lwIP stays initialised: it has no teardown; the caller exits. */
free_conns:
	free(stack.conns);
	stack.conns = NULL;
	return ret;
}

void
echo_stack_shutdown(void)
{
	uint32_t i;

	if (!stack.up)
		return;
	LOCK_TCPIP_CORE();
	tcp_close(stack.listener);
	stack.listener = NULL;
	for (i = 0; i < stack.conf.max_conns; i++) {
		struct echo_conn *c = &stack.conns[i];
		struct tcp_pcb *pcb = c->pcb;

		if (pcb == NULL)
			continue;
		conn_release(c);
		count(&stack.st.conns_reset, 1);
		tcp_abort(pcb);
	}
	netif_set_down(&stack.netif);
	netif_remove(&stack.netif);
	stack.up = false;
	UNLOCK_TCPIP_CORE();
}

static bool
frame_len_ok(size_t len)
{
	if (len < ETH_HLEN) {
		count(&stack.st.frames_runt, 1);
		return false;
	}
	if (len > (size_t)stack.conf.mtu + ECHO_LINK_HLEN_MAX) {
		count(&stack.st.frames_oversize, 1);
		return false;
	}
	return true;
}

/*
 * One contiguous pbuf for a received frame. Not PBUF_POOL: Debian's
 * liblwip 2.1.3 allocates pool pbufs of 616 bytes (a 536-byte MSS) but
 * fills them as if they held PBUF_POOL_BUFSIZE (1536) of the headers, so
 * a full-size frame overflows the heap (found by ASan). PBUF_RAM is
 * sized by the length asked for.
 */
static struct pbuf *
frame_pbuf(size_t len)
{
	/*
	 * Short frames are padded with zeros to the Ethernet minimum, as a
	 * NIC pads them: lwIP 2.1.3's etharp_input() reads a whole ARP
	 * header without checking the length, past the end of a truncated
	 * one (the tcp_echo_input fuzzer, regression input kept).
	 */
	u16_t size = (u16_t)LWIP_MAX(len, (size_t)ETH_ZLEN);
	struct pbuf *p;

	p = pbuf_alloc(PBUF_RAW, size + ETH_PAD, PBUF_RAM);
	if (p == NULL)
		return NULL;
	pbuf_remove_header(p, ETH_PAD);
	if (len < ETH_ZLEN)
		memset(p->payload, 0, ETH_ZLEN);
	return p;
}

/*
 * What the server has no business receiving. Debian's lwIP is built with
 * IPv6, IP forwarding and loopback: a frame to ff02::1, or one that would
 * make lwIP answer its own address or 127/8, would go to netif_loop_output(),
 * whose queue only lwIP's own thread (absent here) drains. Only ARP and
 * IPv4 pass, and IPv4 neither from us or loopback nor to loopback.
 */
static bool
frame_is_martian(const uint8_t *h)
{
	uint16_t type = (uint16_t)(h[ETH_TYPE_OFF] << 8 | h[ETH_TYPE_OFF + 1]);
	uint32_t src;

	if (type == ETHERTYPE_ARP)
		return false;
	if (type != ETHERTYPE_IPV4)
		return true;
	memcpy(&src, &h[ETH_HLEN + IP_SRC_OFF], sizeof(src));
	return src == stack.conf.ip ||
		h[ETH_HLEN + IP_SRC_OFF] == IPV4_LOOPBACK_NET ||
		h[ETH_HLEN + IP_DST_OFF] == IPV4_LOOPBACK_NET;
}

/* Hand a filled pbuf (ETH_ZLEN bytes at least) to the netif; lwIP owns it. */
static void
netif_deliver(struct pbuf *p)
{
	count(&stack.st.frames_in, 1);
	if (frame_is_martian(p->payload)) {
		count(&stack.st.frames_filtered, 1);
		pbuf_free(p);
		return;
	}
	if (stack.netif.input(p, &stack.netif) != ERR_OK)
		pbuf_free(p);
}

void
echo_stack_input(const void *frame, size_t len)
{
	struct pbuf *p;

	LOCK_TCPIP_CORE();
	if (stack.up && frame_len_ok(len)) {
		p = frame_pbuf(len);
		if (p == NULL) {
			count(&stack.st.rx_nomem, 1);
		} else {
			pbuf_take(p, frame, (u16_t)len);
			netif_deliver(p);
		}
	}
	UNLOCK_TCPIP_CORE();
}

void
echo_stack_input_burst(const struct echo_frame *frames, unsigned int n)
{
	unsigned int i;

	LOCK_TCPIP_CORE();
	for (i = 0; i < n && stack.up; i++) {
		const struct echo_frame *f = &frames[i];
		uint16_t off = 0, s;
		struct pbuf *p;

		if (!frame_len_ok(f->len))
			continue;
		p = frame_pbuf(f->len);
		if (p == NULL) {
			count(&stack.st.rx_nomem, 1);
			continue;
		}
		for (s = 0; s < f->nb_segs && off < f->len; s++) {
			uint16_t l = (uint16_t)LWIP_MIN(f->seg_len[s],
							f->len - off);

			pbuf_take_at(p, f->seg_data[s], l, off);
			off += l;
		}
		netif_deliver(p);
	}
	UNLOCK_TCPIP_CORE();
}

void
echo_stack_timeouts(void)
{
	LOCK_TCPIP_CORE();
	sys_check_timeouts();
	UNLOCK_TCPIP_CORE();
}

uint32_t
echo_stack_active_conns(void)
{
	return __atomic_load_n(&stack.nb_active, __ATOMIC_RELAXED);
}

void
echo_stack_stats(struct echo_stats *st)
{
	const uint64_t *src = (const uint64_t *)&stack.st;
	uint64_t *dst = (uint64_t *)st;
	size_t i;

	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
