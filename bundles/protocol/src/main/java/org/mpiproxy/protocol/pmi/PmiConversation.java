package org.mpiproxy.protocol.pmi;

/** What the PMI server asks of one rank's connection, whichever PMI it speaks. PMI thread only. */
interface PmiConversation {

    /**
     * @param message one request, without its line end (PMI-1) or length field (PMI-2)
     * @return what to answer
     */
    PmiSession.Reply onMessage(String message);

    /** @return whether the rank waits for the job's fence */
    boolean inBarrier();

    /** @return the reply that lets the rank out of the fence */
    String barrierOut();

    /** @return whether the rank finalized */
    boolean finalized();

    /** @return the reply to a wait that a node attribute put since then answers, else empty */
    default String nodeAttributeSet() {
        return "";
    }
}
