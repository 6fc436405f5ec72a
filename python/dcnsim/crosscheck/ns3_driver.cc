// The fixed part of a crosscheck program for ns-3.37: dcnsim's generated
// scenario data (above this line, namespace xc) run by ns-3's own models:
// point-to-point links (DropTailQueue per device), RedQueueDisc where the
// scenario marks, global routing (RandomEcmpRouting for spraying), TCP sockets of
// the profile's congestion control, UDP sockets for probes and streams. It writes
// results.txt: one line per flow, probe, incast round and port.

namespace xc
{
using namespace ns3;

struct FlowState
{
    Ptr<Socket> tx;
    uint64_t target = 0;  // bytes handed to the socket so far may reach this
    uint64_t queued = 0;
    uint64_t got = 0;
    uint64_t want = 0;  // bytes that complete the flow (or the round)
    double end = -1;
    uint32_t highTx = 0;
    bool sentAny = false;
    uint64_t rexmit = 0, timeouts = 0, drops = 0;
    int incast = -1;
};

std::vector<FlowState> g_flows;
std::vector<Ipv4Address> g_hostAddr;
std::vector<double> g_probeRx;
struct PortState
{
    std::string name;
    uint64_t drops = 0;
    uint32_t devPkts = 0, devBytes = 0, qdPkts = 0, qdBytes = 0;
    uint32_t maxPkts = 0;
    int64_t maxBytes = 0;
};
std::vector<PortState> g_ports;
struct IncastState
{
    int round = 0, done = 0;
    double start = 0;
    std::vector<int> flows;
};
std::vector<IncastState> g_incasts;
std::ofstream g_out;

int FlowOfPorts(uint16_t s, uint16_t d)
{
    for (uint16_t p : {s, d})
    {
        if (p >= 10000 && p < 10000 + g_flows.size())
            return p - 10000;
        if (p >= 30000 && p < 30000 + g_flows.size())
            return p - 30000;
    }
    return -1;
}

void CountDrop(int port, uint8_t proto, Ptr<Packet> p)
{
    g_ports[port].drops++;
    int f = -1;
    if (proto == 6)
    {
        TcpHeader th;
        p->PeekHeader(th);
        f = FlowOfPorts(th.GetSourcePort(), th.GetDestinationPort());
    }
    if (f >= 0)
        g_flows[f].drops++;
}

void OnDevDrop(int port, Ptr<const Packet> pkt)
{
    Ptr<Packet> p = pkt->Copy();
    PppHeader ppp;
    p->RemoveHeader(ppp);
    Ipv4Header ip;
    p->RemoveHeader(ip);
    CountDrop(port, ip.GetProtocol(), p);
}

void OnQdDrop(int port, Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    CountDrop(port, ipItem->GetHeader().GetProtocol(), item->GetPacket()->Copy());
}

void Commit(int port)
{
    // The device queue's bytes carry the 2-byte PPP header each; dcnsim counts IP bytes.
    PortState& s = g_ports[port];
    int64_t bytes = int64_t(s.devBytes) - 2 * int64_t(s.devPkts) + int64_t(s.qdBytes);
    s.maxPkts = std::max(s.maxPkts, s.devPkts + s.qdPkts);
    s.maxBytes = std::max<int64_t>(s.maxBytes, std::max<int64_t>(bytes, 0));
}

void Peak(int port)
{
    // Checked once the current event is over: a packet that starts on the wire as it
    // arrives is dequeued in the same event and never waits (dcnsim's count).
    Simulator::ScheduleNow(&Commit, port);
}

void OnDevPkts(int port, uint32_t, uint32_t v) { g_ports[port].devPkts = v; Peak(port); }
void OnDevBytes(int port, uint32_t, uint32_t v) { g_ports[port].devBytes = v; Peak(port); }
void OnQdPkts(int port, uint32_t, uint32_t v) { g_ports[port].qdPkts = v; Peak(port); }
void OnQdBytes(int port, uint32_t, uint32_t v) { g_ports[port].qdBytes = v; Peak(port); }

void OnTx(int f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
        return;
    FlowState& s = g_flows[f];
    uint32_t seq = h.GetSequenceNumber().GetValue();
    if (s.sentAny && int32_t(seq - s.highTx) < 0)
        s.rexmit++;
    else
        s.highTx = seq + p->GetSize();
    s.sentAny = true;
}

void OnCongState(int f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
        g_flows[f].timeouts++;
}

void Fill(int f, Ptr<Socket> sock, uint32_t)
{
    FlowState& s = g_flows[f];
    while (s.queued < s.target)
    {
        uint32_t room = sock->GetTxAvailable();
        if (room == 0)
            return;
        uint32_t n = uint32_t(std::min<uint64_t>({room, s.target - s.queued, 1 << 16}));
        if (sock->Send(Create<Packet>(n)) < 0)
            return;
        s.queued += n;
    }
}

void StartRound(int a);

void Delivered(int f)
{
    FlowState& s = g_flows[f];
    if (s.got < s.want || s.end >= 0)
        return;
    s.end = Simulator::Now().GetSeconds();
    if (s.incast < 0)
        return;
    IncastState& inc = g_incasts[s.incast];
    if (++inc.done < int(inc.flows.size()))
        return;
    g_out << "round " << INCASTS[s.incast].app << " " << inc.round << " " << inc.start << " "
          << s.end << "\n";
    if (++inc.round < INCASTS[s.incast].rounds)
        StartRound(s.incast);
}

void OnRecv(int f, Ptr<Socket> sock)
{
    Ptr<Packet> p;
    while ((p = sock->Recv()))
        g_flows[f].got += p->GetSize();
    Delivered(f);
}

void OnAccept(int f, Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, f));
}

void Open(int f)
{
    const Flow& fl = FLOWS[f];
    Ptr<Node> node = NodeList::GetNode(fl.src);
    Ptr<Socket> sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    g_flows[f].tx = sock;
    sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), 30000 + f));
    sock->Connect(InetSocketAddress(g_hostAddr[fl.dst], 10000 + f));
    sock->SetSendCallback(MakeBoundCallback(&Fill, f));
    Fill(f, sock, 0);
}

void Send(int f, uint64_t bytes)
{
    FlowState& s = g_flows[f];
    s.target += bytes;
    s.want += bytes;
    s.end = -1;
    if (s.tx)
        Fill(f, s.tx, 0);
    else
        Open(f);
}

void StartRound(int a)
{
    IncastState& inc = g_incasts[a];
    inc.start = Simulator::Now().GetSeconds();
    inc.done = 0;
    for (int f : inc.flows)
        Send(f, INCASTS[a].sru);
}

void OnProbe(int id, Ptr<Socket> sock)
{
    while (sock->Recv())
        if (g_probeRx[id] < 0)
            g_probeRx[id] = Simulator::Now().GetSeconds();
}

void Drain(Ptr<Socket> sock)
{
    while (sock->Recv())
    {
    }
}

void SendDatagram(Ptr<Socket> sock, uint32_t size)
{
    sock->Send(Create<Packet>(size - 28));  // the size on the wire: IPv4 20 + UDP 8 B
}

void StreamTick(Ptr<Socket> sock, uint32_t size, double gap, double stop)
{
    if (Simulator::Now().GetSeconds() >= stop)
        return;
    SendDatagram(sock, size);
    Simulator::Schedule(Seconds(gap), &StreamTick, sock, size, gap, stop);
}

void Sink(int node, uint16_t port, Callback<void, Ptr<Socket>> recv)
{
    Ptr<Socket> s = Socket::CreateSocket(NodeList::GetNode(node), UdpSocketFactory::GetTypeId());
    s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    s->SetRecvCallback(recv);
}

int Main()
{
    SetDefaults();
    NodeContainer nodes;
    nodes.Create(N_NODES);
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    g_hostAddr.resize(N_HOSTS);
    std::vector<Ptr<NetDevice>> devs;
    std::vector<int> qkind;
    for (const Link& l : LINKS)
    {
        PointToPointHelper p2p;
        // Without flow control a packet meeting a full device queue is dropped there, by
        // the DropTailQueue (traced below). With it (the helper's default), ns-3.37 stops
        // the device's NetDeviceQueue once it cannot take another MTU-sized packet
        // (net-device-queue-interface.h, PacketEnqueued) and TrafficControlLayer::Send,
        // finding no queue disc, discards every packet sent meanwhile before it reaches
        // the queue, seen only by the node's "TcDrop" trace (traffic-control-layer.h,
        // m_dropped). Flow control is added back below for the ports with a queue disc.
        p2p.DisableFlowControl();
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(l.bps)));
        p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(l.delayPs)));
        NetDeviceContainer d = p2p.Install(nodes.Get(l.a), nodes.Get(l.b));
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        addr.NewNetwork();
        if (l.a < N_HOSTS)
            g_hostAddr[l.a] = ifs.GetAddress(0);
        if (l.b < N_HOSTS)
            g_hostAddr[l.b] = ifs.GetAddress(1);
        for (int side = 0; side < 2; ++side)
        {
            int from = side == 0 ? l.a : l.b, to = side == 0 ? l.b : l.a;
            PortState ps;
            ps.name = std::string(NAMES[from]) + "->" + NAMES[to];
            g_ports.push_back(ps);
            devs.push_back(d.Get(side));
            qkind.push_back(from < N_HOSTS ? 0 : 1);
        }
    }
    for (size_t i = 0; i < devs.size(); ++i)
    {
        const QueueSpec& q = QUEUES[qkind[i]];
        // Ipv4AddressHelper::Assign installs no default queue disc on a device without
        // flow control; without an AQM the port is the device's DropTailQueue alone,
        // holding `capacity` waiting packets (PointToPointNetDevice dequeues the packet
        // it sends, as dcnsim counts).
        NS_ABORT_MSG_IF(devs[i]->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(devs[i]),
                        "unexpected queue disc on " << g_ports[i].name);
        Ptr<Queue<Packet>> dq = DynamicCast<PointToPointNetDevice>(devs[i])->GetQueue();
        int port = int(i);
        dq->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnDevDrop, port));
        dq->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnDevPkts, port));
        dq->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnDevBytes, port));
        if (!q.aqm)
        {
            // In bytes the device counts each packet's 2-byte PPP header too: room for
            // them is added as for packets of MEAN_PKT bytes.
            dq->SetMaxSize(q.bytes ? QueueSize(QueueSizeUnit::BYTES, q.capacity + 2 * (q.capacity / MEAN_PKT))
                                   : QueueSize(QueueSizeUnit::PACKETS, q.capacity));
            continue;
        }
        // With RED the device holds one packet besides the one on the wire and the
        // queue disc the rest, so the disc's limit and thresholds are one less. The disc
        // waits for room in the device through flow control, aggregated here as
        // PointToPointHelper::Install does when flow control is enabled.
        Ptr<NetDeviceQueueInterface> ndqi = CreateObject<NetDeviceQueueInterface>();
        ndqi->GetTxQueue(0)->ConnectQueueTraces(dq);
        devs[i]->AggregateObject(ndqi);
        dq->SetMaxSize(QueueSize("1p"));
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, q.capacity - 1)),
                             "MinTh", DoubleValue(q.min - 1), "MaxTh", DoubleValue(q.max - 1),
                             "QW", DoubleValue(q.weight), "LInterm", DoubleValue(1.0 / q.maxP),
                             "Gentle", BooleanValue(false), "Wait", BooleanValue(false),
                             "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false),
                             "MeanPktSize", UintegerValue(MEAN_PKT),
                             "LinkBandwidth", DataRateValue(DataRate(LINKS[i / 2].bps)),
                             "LinkDelay", TimeValue(PicoSeconds(LINKS[i / 2].delayPs)));
        QueueDiscContainer qd = tch.Install(devs[i]);
        qd.Get(0)->TraceConnectWithoutContext("Drop", MakeBoundCallback(&OnQdDrop, port));
        qd.Get(0)->TraceConnectWithoutContext("PacketsInQueue", MakeBoundCallback(&OnQdPkts, port));
        qd.Get(0)->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&OnQdBytes, port));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_flows.resize(N_FLOWS);
    for (int f = 0; f < N_FLOWS; ++f)
    {
        Ptr<Socket> l = Socket::CreateSocket(NodeList::GetNode(FLOWS[f].dst), TcpSocketFactory::GetTypeId());
        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), 10000 + f));
        l->Listen();
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeBoundCallback(&OnAccept, f));
        if (FLOWS[f].incast < 0)
            Simulator::Schedule(PicoSeconds(FLOWS[f].startPs), &Send, f, FLOWS[f].size);
        else
            g_flows[f].incast = FLOWS[f].incast;
    }
    g_incasts.resize(N_INCASTS);
    for (int a = 0; a < N_INCASTS; ++a)
    {
        for (int f = 0; f < N_FLOWS; ++f)
            if (FLOWS[f].incast == a)
                g_incasts[a].flows.push_back(f);
        Simulator::Schedule(PicoSeconds(INCASTS[a].startPs), &StartRound, a);
    }
    g_probeRx.assign(N_PROBES, -1);
    for (int i = 0; i < N_PROBES; ++i)
    {
        const Probe& p = PROBES[i];
        Sink(p.dst, 40000 + i, MakeBoundCallback(&OnProbe, i));
        Ptr<Socket> s = Socket::CreateSocket(NodeList::GetNode(p.src), UdpSocketFactory::GetTypeId());
        s->Connect(InetSocketAddress(g_hostAddr[p.dst], 40000 + i));
        Simulator::Schedule(PicoSeconds(p.timePs), &SendDatagram, s, p.size);
    }
    for (int i = 0; i < N_STREAMS; ++i)
    {
        const Stream& st = STREAMS[i];
        Sink(st.dst, 50000 + i, MakeCallback(&Drain));
        Ptr<Socket> s = Socket::CreateSocket(NodeList::GetNode(st.src), UdpSocketFactory::GetTypeId());
        s->Connect(InetSocketAddress(g_hostAddr[st.dst], 50000 + i));
        Simulator::Schedule(Seconds(st.start), &StreamTick, s, st.size, st.interval, st.stop);
    }
    g_out.open("results.txt");
    if (STOP_PS > 0)
        Simulator::Stop(PicoSeconds(STOP_PS));
    Simulator::Run();
    for (int f = 0; f < N_FLOWS; ++f)
    {
        const FlowState& s = g_flows[f];
        g_out << "flow " << f << " " << s.end << " " << s.drops << " " << s.rexmit << " " << s.timeouts << "\n";
    }
    for (int i = 0; i < N_PROBES; ++i)
        g_out << "probe " << i << " " << g_probeRx[i] << "\n";
    for (const PortState& p : g_ports)
        g_out << "port " << p.name << " " << p.drops << " " << p.maxPkts << " " << p.maxBytes << "\n";
    g_out.close();
    Simulator::Destroy();
    return 0;
}
} // namespace xc

int main()
{
    return xc::Main();
}
